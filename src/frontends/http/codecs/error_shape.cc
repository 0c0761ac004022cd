#include "frontends/http/codecs/error_shape.h"

#include <utility>

#include "common/http_status.h"
#include "frontends/http/codecs/anthropic_codec.h"
#include "frontends/http/codecs/openai_error.h"

namespace inferd {
namespace {

// Forwards to `inner`, reshaping error replies.
class ErrorShapeResponder : public Responder {
 public:
  ErrorShapeResponder(ErrorShape shape, ResponderPtr inner)
      : shape_(shape), inner_(std::move(inner)) {}

  void Send(HttpReply reply) override { inner_->Send(InErrorShape(shape_, std::move(reply))); }

  void Defer(std::function<HttpReply()> make_reply) override {
    inner_->Defer([shape = shape_, make_reply = std::move(make_reply)] {
      return InErrorShape(shape, make_reply());
    });
  }

  // A stream's head is a success; its errors are events its codec writes in its shape.
  ReplyStreamPtr StartStream(HttpReply head) override {
    return inner_->StartStream(std::move(head));
  }

  void WatchDisconnect(std::function<void()> on_disconnect) override {
    inner_->WatchDisconnect(std::move(on_disconnect));
  }

  void NoteModel(const ModelHandle& model) override { inner_->NoteModel(model); }
  SessionRequest* record() override { return inner_->record(); }

 private:
  const ErrorShape shape_;
  const ResponderPtr inner_;
};

}  // namespace

ErrorShape ErrorShapeOf(std::string_view path) {
  if (path != "/v1" && !path.starts_with("/v1/")) return ErrorShape::kPlain;
  if (path == "/v1/messages" || path.starts_with("/v1/messages/")) return ErrorShape::kAnthropic;
  // TF-Serving's REST API shares the /v1/models/ prefix; its paths have a ':' verb
  // (M:predict) or more segments than OpenAI's /v1/models/M.
  if (!path.starts_with("/v1/models/")) return ErrorShape::kOpenAi;
  const std::string_view rest = path.substr(std::string_view("/v1/models/").size());
  const bool tf_serving =
      rest.find(':') != std::string_view::npos || rest.find('/') != std::string_view::npos;
  return tf_serving ? ErrorShape::kPlain : ErrorShape::kOpenAi;
}

HttpReply InErrorShape(ErrorShape shape, HttpReply reply) {
  if (shape == ErrorShape::kPlain || reply.status < 400) return reply;
  // The recorded error carries the details; a reply made from an HTTP status alone (a
  // readiness 503) has only its code.
  const absl::Status status =
      !reply.error.ok() ? reply.error : absl::Status(StatusCodeForHttp(reply.status), "");
  reply.body = shape == ErrorShape::kAnthropic ? AnthropicErrorBody(reply.status, status)
                                               : OpenAiErrorBody(reply.status, status);
  reply.content_type = "application/json";
  return reply;
}

HttpReply InPathErrorShape(std::string_view path, HttpReply reply) {
  return InErrorShape(ErrorShapeOf(path), std::move(reply));
}

ResponderPtr WithErrorShape(ErrorShape shape, ResponderPtr inner) {
  if (shape == ErrorShape::kPlain) return inner;
  return std::make_shared<ErrorShapeResponder>(shape, std::move(inner));
}

}  // namespace inferd
