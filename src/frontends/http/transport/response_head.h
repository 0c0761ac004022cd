// The status line and header fields of a reply: the bytes sent before its body.
//
// Written by hand into one reused string instead of through Beast's response serializer:
// under load the serializer's buffer-sequence machinery cost about 5 % of the server's CPU
// per request (bench/results/2026-11-30-busy-poll.md) for a head that is always the same
// few fields. The body is sent as a second buffer of the same write, never copied.
#ifndef INFERD_FRONTENDS_HTTP_TRANSPORT_RESPONSE_HEAD_H_
#define INFERD_FRONTENDS_HTTP_TRANSPORT_RESPONSE_HEAD_H_

#include <string>

#include "frontends/http/http_types.h"

namespace inferd {

// Replaces `out` with the head of `reply` for a request of HTTP `version` (10 or 11):
// Server, Content-Type, Content-Length (of reply.body), the reply's own headers, and the
// Connection field that `keep_alive` needs in that version (HTTP/1.1 keeps connections
// open unless told "close"; HTTP/1.0 closes them unless told "keep-alive").
void WriteResponseHead(const HttpReply& reply, unsigned version, bool keep_alive, std::string* out);

// The head of a streamed reply: as WriteResponseHead, but the body follows in chunks
// (Transfer-Encoding: chunked) instead of having a length. HTTP/1.0 has no chunks: its
// streamed body runs until the connection closes, so `keep_alive` must be false there.
void WriteStreamHead(const HttpReply& reply, unsigned version, bool keep_alive, std::string* out);

// Appends `data` to `out` as one chunk of a chunked body (nothing for empty data, which
// would end the body).
void AppendChunk(std::string_view data, std::string* out);
// The end of a chunked body.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_TRANSPORT_RESPONSE_HEAD_H_
