#include "frontends/http/handler_context.h"

#include <charconv>
#include <utility>

#include "common/strings.h"
#include "frontends/http/request_record.h"

namespace inferd {

absl::Status ApplySchedulingHeaders(const HttpRequestView& view, InferRequest& request) {
  request.fallback_priority = view.tenant_priority;
  const std::string_view timeout = view.Header(kTimeoutHeader);
  if (timeout.empty() || request.timeout_us > 0) return absl::OkStatus();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(timeout.data(), timeout.data() + timeout.size(), value);
  if (ec != std::errc() || end != timeout.data() + timeout.size() || value < 0) {
    return absl::InvalidArgumentError(StrCat("header ", kTimeoutHeader, ": '", timeout,
                                             "' is not a non-negative integer (microseconds)"));
  }
  request.timeout_us = value;
  return absl::OkStatus();
}

void NoteModel(Responder& responder, const ModelHandle& model) {
  if (RequestRecord* record = responder.record()) record->model = model;
}

void NoteModelIfLoaded(const HandlerContext& ctx, Responder& responder, std::string_view name,
                       std::optional<int64_t> version) {
  if (responder.record() == nullptr) return;
  if (absl::StatusOr<ModelHandle> loaded = ctx.models->Acquire(name, version); loaded.ok()) {
    NoteModel(responder, *loaded);
  }
}

void SubmitInference(const ModelHandle& model, std::unique_ptr<InferRequest> request,
                     ResponderPtr responder, ReplyEncoder encode) {
  NoteModel(*responder, model);
  request->on_complete = [responder = std::move(responder),
                          encode = std::move(encode)](InferResponse response) mutable {
    // The deferred function runs on the I/O thread, where the record may be touched.
    responder->Defer([response = std::move(response), encode = std::move(encode), responder] {
      if (RequestRecord* record = responder->record()) record->batch_size = response.batch_size;
      if (!response.status.ok()) return ErrorReply(response.status);
      return encode(response);
    });
  };
  model->Infer(std::move(request));
}

void AcquireAndSubmit(const HandlerContext& ctx, std::string_view name,
                      std::optional<int64_t> version, std::unique_ptr<InferRequest> request,
                      ResponderPtr responder,
                      std::function<ReplyEncoder(const ServedModel&)> make_encoder) {
  const int64_t timeout_us = request->timeout_us;
  // std::function needs a copyable callable: the request travels in a shared_ptr.
  auto pending = std::make_shared<std::unique_ptr<InferRequest>>(std::move(request));
  ctx.models->AcquireForInference(
      name, version, timeout_us,
      [pending, responder = std::move(responder),
       make_encoder = std::move(make_encoder)](absl::StatusOr<ModelHandle> model) mutable {
        if (!model.ok()) return responder->Send(ErrorReply(model.status()));
        SubmitInference(*model, std::move(*pending), std::move(responder), make_encoder(**model));
      });
}

}  // namespace inferd
