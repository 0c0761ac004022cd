// OpenAI's error object, {"error": {"message", "type", "param", "code"}}: one table maps an
// error's HTTP status and its details (common/error_detail.h) to OpenAI's type and code, so
// OpenAI's client libraries raise the right exception (AuthenticationError,
// NotFoundError, ...) and programs can branch on `code` and `param`. Every error on the
// OpenAI paths is written with it, whichever layer refused the request (error_shape.h).
#ifndef INFERD_FRONTENDS_HTTP_CODECS_OPENAI_ERROR_H_
#define INFERD_FRONTENDS_HTTP_CODECS_OPENAI_ERROR_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "frontends/http/http_types.h"

namespace inferd {

struct OpenAiError {
  std::string message;
  std::string_view type;  // "invalid_request_error", "authentication_error", ...
  std::string_view code;  // "invalid_api_key", "model_not_found", ...; empty: null
  std::string param;      // the request field at fault; empty: null
};

// The OpenAI error for `status` answered with HTTP status `http_status`. The message has
// no server folder in it (common/client_paths.h).
OpenAiError OpenAiErrorFor(unsigned http_status, const absl::Status& status);

// {"error": {...}} for OpenAiErrorFor(http_status, status).
std::string OpenAiErrorBody(unsigned http_status, const absl::Status& status);

// The error reply for `status` (the HTTP status it maps to, Retry-After on 429) with
// OpenAI's body.
HttpReply OpenAiErrorReply(const absl::Status& status);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_OPENAI_ERROR_H_
