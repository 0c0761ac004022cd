#include "frontends/http/http_types.h"

#include <algorithm>
#include <cctype>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/client_paths.h"

namespace inferd {

std::string_view HttpRequestView::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() &&
        std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return value;
    }
  }
  return {};
}

unsigned HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

HttpReply ErrorReply(unsigned http_status, std::string_view raw_message) {
  // Every error body is written here: no server folder reaches a client.
  const std::string message = WithoutServerPaths(raw_message);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("error");
  writer.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  writer.EndObject();
  HttpReply reply;
  reply.status = http_status;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

HttpReply ErrorReply(const absl::Status& status) {
  HttpReply reply = ErrorReply(HttpStatusFor(status.code()),
                               std::string_view(status.message().data(), status.message().size()));
  // 429 means "overloaded, come back": say when, so well-behaved clients back off.
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    reply.headers.emplace_back("Retry-After", "1");
  }
  return reply;
}

}  // namespace inferd
