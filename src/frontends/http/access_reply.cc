#include "frontends/http/access_reply.h"

#include <algorithm>
#include <string>
#include <utility>

namespace inferd {
namespace {

class PermitResponder : public Responder {
 public:
  PermitResponder(ResponderPtr inner, std::shared_ptr<TenantPermit> permit)
      : inner_(std::move(inner)), permit_(std::move(permit)) {}

  void Send(HttpReply reply) override {
    permit_->Finish(StatusCodeOf(reply));
    inner_->Send(std::move(reply));
  }

  void Defer(std::function<HttpReply()> make_reply) override {
    inner_->Defer([make_reply = std::move(make_reply), permit = permit_] {
      HttpReply reply = make_reply();
      permit->Finish(StatusCodeOf(reply));
      return reply;
    });
  }

  RequestRecord* record() override { return inner_->record(); }

 private:
  const ResponderPtr inner_;
  const std::shared_ptr<TenantPermit> permit_;
};

}  // namespace

HttpReply AccessDeniedReply(const AccessDenial& denial) {
  HttpReply reply = ErrorReply(denial.status);
  if (denial.status.code() == absl::StatusCode::kUnauthenticated) {
    reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"inferd\"");
  }
  if (denial.status.code() == absl::StatusCode::kResourceExhausted) {
    // ErrorReply said "1"; the tenant's bucket knows better.
    std::erase_if(reply.headers, [](const auto& header) { return header.first == "Retry-After"; });
    reply.headers.emplace_back("Retry-After", std::to_string(std::max(1, denial.retry_after_s)));
  }
  return reply;
}

ResponderPtr WithTenantPermit(ResponderPtr inner, std::shared_ptr<TenantPermit> permit) {
  return std::make_shared<PermitResponder>(std::move(inner), std::move(permit));
}

}  // namespace inferd
