#include "frontends/http/transport/http_server.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "common/busy_poll.h"
#include "common/strings.h"
#include "frontends/http/transport/http_session.h"

namespace inferd {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, const HttpRouter* router, std::atomic<bool>* draining)
      : options_(std::move(options)), acceptor_(io_) {
    shared_.router = router;
    shared_.draining = draining;
    shared_.max_request_bytes = options_.max_request_bytes;
    shared_.max_stream_backlog_bytes = options_.max_stream_backlog_bytes;
    shared_.idle_timeout = options_.idle_timeout;
    shared_.header_timeout = options_.header_timeout;
    shared_.body_timeout = options_.body_timeout;
    shared_.recorder = options_.recorder;
    shared_.large_body_pool = &large_body_pool_;
  }

  ~Impl() { StopThreads(); }

  absl::Status Start() {
    if (!options_.tls_cert_pem.empty()) {
      absl::Status tls = SetUpTls();
      if (!tls.ok()) return tls;
    }
    boost::system::error_code ec;
    const asio::ip::address address = asio::ip::make_address(options_.host, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          StrCat("--host '", options_.host, "' is not an IP address: ", ec.message()));
    }
    const tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(
          StrCat("cannot listen on ", options_.host, ":", options_.port, ": ", ec.message()));
    }
    Accept();
    // Without outstanding work io_.run() returns as soon as every connection waits on a model
    // (nothing to read, acceptor closed during shutdown) and their replies would never be sent.
    work_guard_.emplace(io_.get_executor());
    for (int i = 0; i < options_.io_threads; ++i) {
      threads_.emplace_back([this, i] {
        const std::string name = StrCat("http-io#", i);
        pthread_setname_np(pthread_self(), name.c_str());
        RunIoThread();
      });
    }
    return absl::OkStatus();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  bool Shutdown() {
    shared_.draining->store(true);
    asio::post(io_, [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      accept_retry_.cancel();
    });
    const bool drained = WaitForInFlight(options_.drain_timeout);
    if (!drained) {
      // Streams still running are ended properly (a final error event and the chunked
      // terminator; their generations cancelled) rather than cut mid-way by the stop; a
      // moment for those writes, then whatever is left is closed.
      const size_t streams = shared_.streams.EndAll();
      spdlog::warn(
          "shutdown: {} requests still in flight after {} s ({} streams ended with an "
          "error event); closing anyway",
          shared_.in_flight.load(), options_.drain_timeout.count(), streams);
      if (streams > 0) WaitForInFlight(kStreamEndGrace);
    }
    StopThreads();
    return drained;
  }

 private:
  // How long ended streams get to write their last event at the shutdown deadline.
  static constexpr std::chrono::seconds kStreamEndGrace{2};

  // Until no request is in flight (true) or `timeout` passes (false).
  bool WaitForInFlight(std::chrono::steady_clock::duration timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (shared_.in_flight.load() > 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  absl::Status SetUpTls() {
    tls_.emplace(asio::ssl::context::tls_server);
    boost::system::error_code ec;
    tls_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                          asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                          asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                      ec);
    if (!ec) {
      tls_->use_certificate_chain(
          asio::buffer(options_.tls_cert_pem.data(), options_.tls_cert_pem.size()), ec);
    }
    if (ec) return absl::InvalidArgumentError(StrCat("TLS certificate: ", ec.message()));
    tls_->use_private_key(asio::buffer(options_.tls_key_pem.data(), options_.tls_key_pem.size()),
                          asio::ssl::context::pem, ec);
    if (ec) return absl::InvalidArgumentError(StrCat("TLS private key: ", ec.message()));
    shared_.tls = &*tls_;
    return absl::OkStatus();
  }

  // The executor of a new connection's handlers. With one I/O thread they run one at a time
  // already, so the connection needs no strand (a strand adds a lock and a queue hop to every
  // handler, and the posts from execution threads go through it); with more I/O threads a
  // strand per connection keeps its handlers from running at once.
  asio::any_io_executor ConnectionExecutor() {
    if (options_.io_threads == 1) return io_.get_executor();
    return asio::make_strand(io_);
  }

  void Accept() {
    acceptor_.async_accept(ConnectionExecutor(),
                           [this](boost::system::error_code ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor_.is_open())
                               return;
                             if (ec) return AcceptFailed(ec);
                             accept_backoff_ = std::chrono::milliseconds::zero();
                             socket.set_option(tcp::no_delay(true), ec);
                             if (shared_.tls != nullptr) {
                               std::make_shared<HttpsSession>(std::move(socket), &shared_)->Start();
                             } else {
                               std::make_shared<HttpSession>(std::move(socket), &shared_)->Start();
                             }
                             Accept();
                           });
  }

  // Out of file descriptors (EMFILE, ENFILE) or memory, accept fails at once for as long as
  // the condition lasts: retrying at once spun a core and wrote a log line per try. Wait
  // instead, doubling from 10 ms to 1 s, and log once per second at most.
  void AcceptFailed(boost::system::error_code ec) {
    ++accept_failures_;
    accept_backoff_ = std::clamp(accept_backoff_ * 2, std::chrono::milliseconds(10),
                                 std::chrono::milliseconds(1000));
    const auto now = std::chrono::steady_clock::now();
    if (now - last_accept_log_ >= std::chrono::seconds(1)) {
      spdlog::warn("accept failed: {} ({} failure(s) since the last report); retrying in {} ms",
                   ec.message(), accept_failures_, accept_backoff_.count());
      accept_failures_ = 0;
      last_accept_log_ = now;
    }
    accept_retry_.expires_after(accept_backoff_);
    accept_retry_.async_wait([this](boost::system::error_code wait_ec) {
      if (wait_ec || !acceptor_.is_open()) return;
      Accept();
    });
  }

  void RunIoThread() {
    if (options_.busy_poll <= std::chrono::microseconds::zero()) {
      io_.run();
      return;
    }
    // poll() runs whatever is ready (checking the sockets without blocking); only after a
    // whole budget with nothing to do does the thread block in run_one(). It polls only
    // while at most one request is in flight: then the reply or the client's next request
    // is all it waits for, and the model runs on another core. With many requests in flight
    // traffic wakes it soon anyway, and a polling I/O thread took the core the model's
    // intra-op threads needed (mlp_scorer without batching, 64 clients: 25k -> 21k req/s,
    // bench/results/2026-11-30-busy-poll.md).
    while (!io_.stopped()) {
      if (shared_.in_flight.load(std::memory_order_relaxed) <= 1 &&
          BusyPoll(options_.busy_poll, [this] { return io_.poll() > 0; })) {
        continue;
      }
      io_.run_one();
    }
  }

  void StopThreads() {
    work_guard_.reset();
    io_.stop();
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    threads_.clear();
    large_body_pool_.stop();
    large_body_pool_.join();
  }

  const HttpServerOptions options_;
  std::optional<asio::ssl::context> tls_;
  // The concurrency hint lets a single I/O thread queue its own handlers without the lock.
  asio::io_context io_{std::max(1, options_.io_threads)};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_guard_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_{io_};
  // Touched only by the accept chain (one handler at a time).
  std::chrono::milliseconds accept_backoff_{0};
  int64_t accept_failures_ = 0;
  std::chrono::steady_clock::time_point last_accept_log_{};
  // One thread: large bodies are rare, and decoding two at once would only double the peak
  // memory. Declared before shared_, which points at it.
  boost::asio::thread_pool large_body_pool_{1};
  SessionShared shared_;
  std::vector<std::thread> threads_;
};

HttpServer::HttpServer(HttpServerOptions options, const HttpRouter* router,
                       std::atomic<bool>* draining)
    : impl_(std::make_unique<Impl>(std::move(options), router, draining)) {}

HttpServer::~HttpServer() = default;

absl::Status HttpServer::Start() { return impl_->Start(); }
uint16_t HttpServer::port() const { return impl_->port(); }
bool HttpServer::Shutdown() { return impl_->Shutdown(); }

}  // namespace inferd
