// The frontend's view of one HTTP exchange, independent of the HTTP library, so handlers are
// plain request -> reply functions that unit tests can call without a socket.
#ifndef INFERD_FRONTENDS_HTTP_HTTP_TYPES_H_
#define INFERD_FRONTENDS_HTTP_HTTP_TYPES_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/model/infer_callbacks.h"

namespace inferd {

class Tenant;  // auth/tenant.h

struct SessionRequest;  // frontends/http/session_request.h

enum class HttpMethod { kGet, kHead, kPost, kOther };

struct HttpRequestView {
  HttpMethod method = HttpMethod::kGet;
  std::string_view path;   // "/v2/models/m/infer", percent-decoding not applied
  std::string_view query;  // "model=m" (without '?')
  // The body, owned by the connection. Mutable so the JSON parser can pad it in place.
  std::string* body = nullptr;
  // Request headers, views into the connection's buffers.
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  // The connection's remote IP address ("127.0.0.1"), owned by the connection; empty when
  // unknown. Access control asks it whether a keyless management request is local.
  std::string_view peer = {};
  // The caller's tenant's default queue priority (auth/tenant.h); 0: none.
  int tenant_priority = 0;
  // The caller's tenant, for handlers whose model is named in the body (its model list is
  // checked once the body is parsed); null: no tenant.
  Tenant* tenant = nullptr;

  // The value of header `name` (case-insensitive), empty when absent.
  std::string_view Header(std::string_view name) const;
};

// The request header that bounds a request's time in the queue, in microseconds (the same
// as the `timeout` request parameter).
inline constexpr std::string_view kTimeoutHeader = "Inference-Timeout-Us";

struct HttpReply {
  unsigned status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  // What an error reply reports, for the access log and the metrics (OK otherwise): the
  // session records it as it is instead of reading the body back.
  absl::Status error = absl::OkStatus();
};

// A reply sent in pieces as they are produced (server-sent events of a generation).
// Thread-safety: Write and End may be called from any thread; the pieces go out in call
// order, and never block the caller (they are queued for the connection's I/O thread).
class ReplyStream {
 public:
  virtual ~ReplyStream() = default;
  virtual void Write(std::string data) = 0;
  // The last piece; the reply is complete after it. Call exactly once.
  virtual void End(std::string data = {}) = 0;
};

using ReplyStreamPtr = std::shared_ptr<ReplyStream>;

// Delivers the reply for one request, exactly once, from any thread.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void Send(HttpReply reply) = 0;
  // Instead of Send: starts a streamed reply with `head`'s status, content type and headers
  // (its body is ignored) and returns the stream to write the rest through. Null when this
  // transport cannot stream (the unit tests' responders).
  virtual ReplyStreamPtr StartStream(HttpReply head) {
    (void)head;
    return nullptr;
  }
  // Until the reply is complete, runs `on_disconnect` on the connection's I/O thread if the
  // client closes the connection: long requests (generation) stop when nobody waits.
  virtual void WatchDisconnect(std::function<void()> on_disconnect) { (void)on_disconnect; }
  // Runs `make_reply` on the connection's I/O thread and sends what it returns. Execution
  // threads use this so that encoding the response never costs model time.
  virtual void Defer(std::function<HttpReply()> make_reply) = 0;
  // Notes the model version the request reached, for the access log and the metrics, and
  // pins it until the reply is written. Any thread: the acquisition calls it on the loader
  // thread after a lazy load, and the session takes it on its own strand (in order with the
  // reply, which is handed over after it). No-op where nobody records (unit tests).
  virtual void NoteModel(const ModelHandle& model) { (void)model; }
  // The request's access-log record, where encoders note the batch it ran in; null when
  // nobody records (unit tests). On the connection's I/O thread (its strand) only.
  virtual SessionRequest* record() { return nullptr; }
};

using ResponderPtr = std::shared_ptr<Responder>;

// {"error": message} with the status that the code maps to (common/http_status.h).
HttpReply ErrorReply(const absl::Status& status);
HttpReply ErrorReply(unsigned http_status, std::string_view message);
// 405 for a known path asked with the wrong method; `allowed` ("GET, POST") goes in Allow.
HttpReply MethodNotAllowed(std::string_view allowed);

// The code `reply` is counted under: its Status when it carries one, otherwise the code its
// HTTP status stands for (a readiness 503 has no message).
absl::StatusCode StatusCodeOf(const HttpReply& reply);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HTTP_TYPES_H_
