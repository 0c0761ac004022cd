#include "frontends/http/handlers/logging_handler.h"

#include <optional>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include "common/json_body.h"
#include "common/strings.h"
#include "observability/log_setup.h"

namespace inferd {

HttpReply HandleGetLogging() {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("log_level");
  writer.String(CurrentLogLevel().c_str());
  writer.Key("log_format");
  const std::string_view format = LogFormatName(CurrentLogFormat());
  writer.String(format.data(), static_cast<rapidjson::SizeType>(format.size()));
  writer.Key("access_log");
  writer.Bool(AccessLogEnabled());
  writer.EndObject();
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

HttpReply HandleSetLogging(const HttpRequestView& request) {
  constexpr std::string_view kShape =
      "the body must be a JSON object such as {\"log_level\": \"debug\"}";
  std::string empty;
  absl::StatusOr<ParsedJson> json = ParseJsonBody(request.body != nullptr ? *request.body : empty);
  if (!json.ok()) return ErrorReply(400, StrCat(json.status().message(), "; ", kShape));
  simdjson::dom::object body;
  if (json->root().get(body)) return ErrorReply(400, std::string(kShape));
  // Check everything before changing anything, so a bad request changes nothing.
  std::optional<std::string> level;
  std::optional<LogFormat> format;
  std::optional<bool> access_log;
  for (const auto [key, value] : body) {
    std::string_view text;
    bool flag = false;
    if (key == "log_level" && !value.get(text)) {
      level = std::string(text);
    } else if (key == "log_format" && !value.get(text)) {
      absl::StatusOr<LogFormat> parsed = ParseLogFormat(text);
      if (!parsed.ok()) return ErrorReply(400, StrCat("log_format: ", parsed.status().message()));
      format = *parsed;
    } else if (key == "access_log" && !value.get(flag)) {
      access_log = flag;
    } else if (key == "log_level" || key == "log_format" || key == "access_log") {
      return ErrorReply(400, StrCat(key,
                                    ": wrong type (log_level and log_format take strings, "
                                    "access_log true or false)"));
    } else {
      return ErrorReply(400, StrCat("unknown field '", EscapeForLog(key),
                                    "' (known: log_level, log_format, access_log)"));
    }
  }
  if (level) {
    if (absl::Status set = SetLogLevel(*level); !set.ok()) {
      return ErrorReply(400, StrCat("log_level: ", set.message()));
    }
  }
  if (format) (void)SetLogFormat(*format);
  if (access_log) SetAccessLogEnabled(*access_log);
  spdlog::warn("log settings changed: level {}, format {}, access log {}", CurrentLogLevel(),
               LogFormatName(CurrentLogFormat()), AccessLogEnabled() ? "on" : "off");
  return HandleGetLogging();
}

}  // namespace inferd
