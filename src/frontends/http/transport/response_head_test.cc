#include "frontends/http/transport/response_head.h"

#include <string>

#include "gtest/gtest.h"

namespace inferd {
namespace {

HttpReply JsonReply(unsigned status, std::string body) {
  HttpReply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

TEST(ResponseHeadTest, KeepAliveHttp11NeedsNoConnectionField) {
  std::string head = "stale bytes from the previous reply";
  WriteResponseHead(JsonReply(200, R"({"output":[0.5]})"), 11, /*keep_alive=*/true, &head);
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\n"
            "Server: inferd\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 16\r\n"
            "\r\n");
}

TEST(ResponseHeadTest, ClosingHttp11SaysClose) {
  std::string head;
  WriteResponseHead(JsonReply(413, "{}"), 11, /*keep_alive=*/false, &head);
  EXPECT_EQ(head,
            "HTTP/1.1 413 Payload Too Large\r\n"
            "Server: inferd\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 2\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(ResponseHeadTest, Http10KeepsAliveOnlyWhenTold) {
  std::string head;
  WriteResponseHead(JsonReply(200, ""), 10, /*keep_alive=*/true, &head);
  EXPECT_EQ(head,
            "HTTP/1.0 200 OK\r\n"
            "Server: inferd\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 0\r\n"
            "Connection: keep-alive\r\n"
            "\r\n");
  WriteResponseHead(JsonReply(200, ""), 10, /*keep_alive=*/false, &head);
  EXPECT_EQ(head.find("Connection"), std::string::npos) << head;
}

TEST(ResponseHeadTest, ReplyHeadersFollowInTheirOrder) {
  HttpReply reply = JsonReply(429, "{}");
  reply.content_type = "text/plain; charset=utf-8";
  reply.headers = {{"Retry-After", "1"}, {"X-Request-Id", "abc"}};
  std::string head;
  WriteResponseHead(reply, 11, true, &head);
  EXPECT_EQ(head,
            "HTTP/1.1 429 Too Many Requests\r\n"
            "Server: inferd\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 2\r\n"
            "Retry-After: 1\r\n"
            "X-Request-Id: abc\r\n"
            "\r\n");
}

TEST(ResponseHeadTest, StreamHeadAnnouncesChunksInsteadOfALength) {
  HttpReply reply = JsonReply(200, "");
  reply.content_type = "text/event-stream";
  std::string head;
  WriteStreamHead(reply, 11, true, &head);
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\n"
            "Server: inferd\r\n"
            "Content-Type: text/event-stream\r\n"
            "Transfer-Encoding: chunked\r\n"
            "Cache-Control: no-cache\r\n"
            "\r\n");
}

TEST(ResponseHeadTest, ChunksCarryTheirLengthInHex) {
  std::string body;
  AppendChunk("data: {}\n\n", &body);
  AppendChunk("", &body);  // nothing: an empty chunk would end the body
  AppendChunk(std::string(26, 'x'), &body);
  EXPECT_EQ(body, "a\r\ndata: {}\n\n\r\n1a\r\n" + std::string(26, 'x') + "\r\n");
}

}  // namespace
}  // namespace inferd
