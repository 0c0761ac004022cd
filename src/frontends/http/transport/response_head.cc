#include "frontends/http/transport/response_head.h"

#include <charconv>
#include <string_view>

#include <boost/beast/http/status.hpp>

namespace inferd {
namespace {

void AppendNumber(uint64_t value, std::string* out) {
  char digits[20];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  out->append(digits, end);
}

void AppendField(std::string_view name, std::string_view value, std::string* out) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

void AppendStatusLine(const HttpReply& reply, unsigned version, std::string* out) {
  out->append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  AppendNumber(reply.status, out);
  out->push_back(' ');
  const boost::beast::string_view reason =
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(reply.status));
  out->append(reason.data(), reason.size());
  out->append("\r\n");
  AppendField("Server", "inferd", out);
  AppendField("Content-Type", reply.content_type, out);
}

void AppendFieldsAndEnd(const HttpReply& reply, unsigned version, bool keep_alive,
                        std::string* out) {
  for (const auto& [name, value] : reply.headers) AppendField(name, value, out);
  if (!keep_alive && version != 10) AppendField("Connection", "close", out);
  if (keep_alive && version == 10) AppendField("Connection", "keep-alive", out);
  out->append("\r\n");
}

}  // namespace

void WriteResponseHead(const HttpReply& reply, unsigned version, bool keep_alive,
                       std::string* out) {
  out->clear();
  AppendStatusLine(reply, version, out);
  out->append("Content-Length: ");
  AppendNumber(reply.body.size(), out);
  out->append("\r\n");
  AppendFieldsAndEnd(reply, version, keep_alive, out);
}

void WriteStreamHead(const HttpReply& reply, unsigned version, bool keep_alive, std::string* out) {
  out->clear();
  AppendStatusLine(reply, version, out);
  if (version != 10) AppendField("Transfer-Encoding", "chunked", out);
  AppendField("Cache-Control", "no-cache", out);
  AppendFieldsAndEnd(reply, version, keep_alive, out);
}

void AppendChunk(std::string_view data, std::string* out) {
  if (data.empty()) return;
  char digits[16];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), data.size(), 16);
  out->append(digits, end);
  out->append("\r\n");
  out->append(data);
  out->append("\r\n");
}

}  // namespace inferd
