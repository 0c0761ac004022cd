#include "frontends/http/handler_context.h"

#include <charconv>
#include <utility>

#include "common/strings.h"
#include "frontends/http/request_record.h"

namespace inferd {

absl::Status ApplySchedulingHeaders(const HttpRequestView& view, InferRequest& request) {
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

}  // namespace inferd
