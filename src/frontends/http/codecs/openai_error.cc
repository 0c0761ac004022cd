#include "frontends/http/codecs/openai_error.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/client_paths.h"
#include "common/error_detail.h"
#include "common/strings.h"
#include "frontends/http/codecs/error_shape.h"

namespace inferd {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

// A string, or null when empty.
void StringOrNull(Writer& w, std::string_view text) {
  if (text.empty()) {
    w.Null();
  } else {
    String(w, text);
  }
}

}  // namespace

OpenAiError OpenAiErrorFor(unsigned http_status, const absl::Status& status) {
  OpenAiError error;
  error.message =
      WithoutServerPaths(std::string_view(status.message().data(), status.message().size()));
  if (error.message.empty()) error.message = StrCat("HTTP ", http_status);
  error.param = ErrorField(status);
  const ErrorReason reason = ErrorReasonOf(status);
  // The types and codes OpenAI's API answers with (its client libraries pick the exception
  // from the HTTP status; programs read type and code).
  switch (http_status) {
    case 401:
      error.type = "authentication_error";
      error.code = "invalid_api_key";
      break;
    case 403:
      error.type = "permission_error";
      break;
    case 404:
      error.type = "not_found_error";
      if (reason == ErrorReason::kUnknownModel) error.code = "model_not_found";
      break;
    case 429:
      // OpenAI names the limit that was reached ("requests", "tokens"): inferd's limits
      // (a tenant's rate and in-flight count, the model's queue) count requests.
      error.type = "requests";
      error.code = "rate_limit_exceeded";
      break;
    default:
      if (http_status >= 500 && http_status != 501) {
        error.type = "server_error";
      } else {
        error.type = "invalid_request_error";
        if (reason == ErrorReason::kContextLengthExceeded) error.code = "context_length_exceeded";
      }
      break;
  }
  return error;
}

std::string OpenAiErrorBody(unsigned http_status, const absl::Status& status) {
  const OpenAiError error = OpenAiErrorFor(http_status, status);
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("error");
  w.StartObject();
  w.Key("message");
  String(w, error.message);
  w.Key("type");
  String(w, error.type);
  w.Key("param");
  StringOrNull(w, error.param);
  w.Key("code");
  StringOrNull(w, error.code);
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

HttpReply OpenAiErrorReply(const absl::Status& status) {
  return InErrorShape(ErrorShape::kOpenAi, ErrorReply(status));
}

}  // namespace inferd
