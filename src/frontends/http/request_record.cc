#include "frontends/http/request_record.h"

#include <rapidjson/document.h>

namespace inferd {

std::string ErrorMessageOfBody(std::string_view body) {
  rapidjson::Document document;
  document.Parse(body.data(), body.size());
  if (document.HasParseError() || !document.IsObject()) return {};
  const auto error = document.FindMember("error");
  if (error == document.MemberEnd()) return {};
  // OpenAI's shape: {"error": {"message": ...}}.
  if (error->value.IsObject()) {
    const auto message = error->value.FindMember("message");
    if (message == error->value.MemberEnd() || !message->value.IsString()) return {};
    return std::string(message->value.GetString(), message->value.GetStringLength());
  }
  if (!error->value.IsString()) return {};
  return std::string(error->value.GetString(), error->value.GetStringLength());
}

}  // namespace inferd
