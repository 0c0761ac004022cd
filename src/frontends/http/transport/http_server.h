// The HTTP/1.1 server: Boost.Beast over Asio, keep-alive, a pool of I/O threads.
//
// I/O threads only read, parse, route and write. Inference requests are handed to a model's
// scheduler and the reply comes back later through a Responder, so an I/O thread never waits
// on a model and a few threads serve hundreds of connections.
//
// Shutdown: readiness turns false, the listening socket closes, requests already read are
// answered (up to a timeout), then the I/O threads stop.
// Thread-safety: Start, Shutdown and port are called from one (the main) thread.
#ifndef INFERD_FRONTENDS_HTTP_TRANSPORT_HTTP_SERVER_H_
#define INFERD_FRONTENDS_HTTP_TRANSPORT_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "frontends/http/routing/router.h"
#include "observability/request_recorder.h"

namespace inferd {

// What may wait for a slow streaming client beside the write in flight, by default. A
// reader that keeps up never comes near it: generation produces a few KB per second per
// sequence, and the kernel's socket buffers hold the backlog of a brief stall on top. A
// client that stops reading made it grow without bound instead (a 4 MB request grew the
// server by 780 MB before the write timeout ended it).
// 1 MiB per connection keeps a thousand stalled streams within a GiB.
inline constexpr size_t kDefaultMaxStreamBacklogBytes = 1u << 20;

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 8080;  // 0 picks a free port; port() tells which
  int io_threads = 1;
  size_t max_request_bytes = 64u << 20;
  // A streamed reply whose client lets more than this wait unwritten is cut.
  size_t max_stream_backlog_bytes = kDefaultMaxStreamBacklogBytes;
  std::chrono::seconds idle_timeout{120};  // a keep-alive connection with no request
  // A request's header must arrive within this of its first byte (of the connection, for
  // its first request), its body within body_timeout of the header: a slow client
  // (Slowloris) cannot hold a connection without sending.
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds body_timeout{60};
  std::chrono::seconds drain_timeout{30};  // how long Shutdown waits for in-flight requests
  RequestRecorder* recorder = nullptr;     // metrics and access log per request; null: none
  // How long an I/O thread with nothing to do keeps polling before it blocks in epoll
  // (common/busy_poll.h): a reply from a model instance is then written without a wake-up.
  std::chrono::microseconds busy_poll{0};
  // PEM text of the certificate chain and its private key: when set, every connection
  // speaks TLS (1.2 or later).
  std::string tls_cert_pem;
  std::string tls_key_pem;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, const HttpRouter* router, std::atomic<bool>* draining);
  ~HttpServer();

  // Binds, listens and starts the I/O threads. InvalidArgument for an unusable TLS
  // certificate or key.
  absl::Status Start();
  uint16_t port() const;

  // Stops accepting and answers what is in flight; returns false if the drain timed out.
  bool Shutdown();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_TRANSPORT_HTTP_SERVER_H_
