#include "frontends/http/routing/access_reply.h"

#include <algorithm>
#include <string>
#include <utility>

namespace inferd {
namespace {

// A streamed reply holds the tenant's slot until its last piece (or, when the client goes
// away first, until the stream is dropped: the permit then finishes as cancelled).
class PermitStream : public ReplyStream {
 public:
  PermitStream(ReplyStreamPtr inner, std::shared_ptr<TenantPermit> permit)
      : inner_(std::move(inner)), permit_(std::move(permit)) {}

  void Write(std::string data) override { inner_->Write(std::move(data)); }
  void End(std::string data) override {
    permit_->Finish(absl::StatusCode::kOk);
    inner_->End(std::move(data));
  }

 private:
  const ReplyStreamPtr inner_;
  const std::shared_ptr<TenantPermit> permit_;
};

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

  ReplyStreamPtr StartStream(HttpReply head) override {
    ReplyStreamPtr stream = inner_->StartStream(std::move(head));
    if (stream == nullptr) return nullptr;
    return std::make_shared<PermitStream>(std::move(stream), permit_);
  }

  void WatchDisconnect(std::function<void()> on_disconnect) override {
    inner_->WatchDisconnect(std::move(on_disconnect));
  }

  void NoteModel(const ModelHandle& model) override { inner_->NoteModel(model); }
  SessionRequest* record() override { return inner_->record(); }

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
