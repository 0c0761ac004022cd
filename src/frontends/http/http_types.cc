#include "frontends/http/http_types.h"

#include <algorithm>
#include <cctype>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/client_paths.h"
#include "common/http_status.h"
#include "common/strings.h"

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
  reply.error = absl::Status(StatusCodeForHttp(http_status),
                             absl::string_view(message.data(), message.size()));
  return reply;
}

HttpReply MethodNotAllowed(std::string_view allowed) {
  HttpReply reply = ErrorReply(405, StrCat("this path takes ", allowed));
  reply.headers.emplace_back("Allow", std::string(allowed));
  return reply;
}

HttpReply ErrorReply(const absl::Status& status) {
  HttpReply reply = ErrorReply(HttpStatusFor(status.code()),
                               std::string_view(status.message().data(), status.message().size()));
  reply.error = status;
  // 429 means "overloaded, come back": say when, so well-behaved clients back off.
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    reply.headers.emplace_back("Retry-After", "1");
  }
  return reply;
}

absl::StatusCode StatusCodeOf(const HttpReply& reply) {
  return !reply.error.ok() ? reply.error.code() : StatusCodeForHttp(reply.status);
}

}  // namespace inferd
