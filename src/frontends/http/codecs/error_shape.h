// Which shape an error body takes on each path, and the one place that gives it that shape.
// KServe, TF-Serving and inferd's own endpoints answer {"error": "<message>"}; the
// OpenAI-compatible paths answer OpenAI's error object (openai_error.h), and Anthropic's
// Messages API (/v1/messages) Anthropic's (anthropic_codec.h), whichever layer
// refused the request: the access check (401, 403, 429), the session (413), the router
// (404, 405), a handler or the model. The router wraps a request's responder with
// WithErrorShape, and the refusals made before the router (RefuseBeforeBody, the session's
// 413) go through InPathErrorShape, so no error on an OpenAI path leaves in another shape.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_ERROR_SHAPE_H_
#define INFERD_FRONTENDS_HTTP_CODECS_ERROR_SHAPE_H_

#include <string_view>

#include "frontends/http/http_types.h"

namespace inferd {

enum class ErrorShape {
  kPlain,      // {"error": "<message>"}
  kOpenAi,     // {"error": {"message", "type", "param", "code"}}
  kAnthropic,  // {"type": "error", "error": {"type", "message"}}
};

// kAnthropic for /v1/messages[/...]; kOpenAi for every other path under /v1 except
// TF-Serving's /v1/models/M[/versions/V|/labels/L]:predict; kPlain for the rest.
ErrorShape ErrorShapeOf(std::string_view path);

// `reply` with its error body (status >= 400) rewritten in `shape`, from the error it
// records; a success, or kPlain, unchanged. Status, headers and the recorded error stay.
HttpReply InErrorShape(ErrorShape shape, HttpReply reply);
// InErrorShape(ErrorShapeOf(path), reply).
HttpReply InPathErrorShape(std::string_view path, HttpReply reply);

// A responder that sends every error reply through InErrorShape(shape); `inner` itself for
// kPlain.
ResponderPtr WithErrorShape(ErrorShape shape, ResponderPtr inner);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_ERROR_SHAPE_H_
