#include "frontends/http/transport/http_session.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/http_status.h"
#include "common/strings.h"
#include "core/memory/process_memory.h"
#include "frontends/http/codecs/error_shape.h"
#include "frontends/http/transport/response_head.h"
#include "observability/request_id.h"

namespace inferd {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;

constexpr std::chrono::seconds kWriteTimeout{60};
constexpr std::chrono::seconds kLingerTimeout{5};
constexpr uint64_t kSmallBody = 16 * 1024;
constexpr uint64_t kLargeReadChunk = 1024 * 1024;

HttpMethod ToMethod(http::verb verb) {
  switch (verb) {
    case http::verb::get:
      return HttpMethod::kGet;
    case http::verb::head:
      return HttpMethod::kHead;
    case http::verb::post:
      return HttpMethod::kPost;
    default:
      return HttpMethod::kOther;
  }
}

constexpr std::chrono::seconds kHandshakeTimeout{30};

// Sends replies back on the session's strand, whichever thread produces them.
template <class Session>
class SessionResponder : public Responder {
 public:
  // Made on the session's strand, for the request it has just read.
  explicit SessionResponder(std::shared_ptr<Session> session)
      : session_(std::move(session)), request_(session_->request_number()) {}

  void Send(HttpReply reply) override {
    asio::dispatch(session_->executor(), [session = session_, reply = std::move(reply)]() mutable {
      session->WriteReply(std::move(reply));
    });
  }

  void Defer(std::function<HttpReply()> make_reply) override {
    asio::post(session_->executor(), [session = session_, make_reply = std::move(make_reply)] {
      session->WriteReply(make_reply());
    });
  }

  ReplyStreamPtr StartStream(HttpReply head) override {
    asio::dispatch(session_->executor(),
                   [session = session_, request = request_, head = std::move(head)]() mutable {
                     session->BeginStream(request, std::move(head));
                   });
    return std::make_shared<SessionStream>(session_, request_);
  }

  void WatchDisconnect(std::function<void()> on_disconnect) override {
    asio::dispatch(session_->executor(), [session = session_, request = request_,
                                          on_disconnect = std::move(on_disconnect)]() mutable {
      session->WatchDisconnect(request, std::move(on_disconnect));
    });
  }

  void NoteModel(const ModelHandle& model) override {
    // Inline on the strand (a ready model, acquired on the I/O thread); posted from the
    // loader thread after a lazy load.
    asio::dispatch(session_->executor(), [session = session_, request = request_, model] {
      session->NoteModel(request, model);
    });
  }

  SessionRequest* record() override { return session_->record(); }

 private:
  // Posts (never dispatches) so that pieces from one thread keep their order.
  class SessionStream : public ReplyStream {
   public:
    SessionStream(std::shared_ptr<Session> session, uint64_t request)
        : session_(std::move(session)), request_(request) {}
    void Write(std::string data) override {
      asio::post(session_->executor(),
                 [session = session_, request = request_, data = std::move(data)]() mutable {
                   session->StreamWrite(request, std::move(data));
                 });
    }
    void End(std::string data) override {
      asio::post(session_->executor(),
                 [session = session_, request = request_, data = std::move(data)]() mutable {
                   session->StreamEnd(request, std::move(data));
                 });
    }

   private:
    std::shared_ptr<Session> session_;
    const uint64_t request_;
  };

  std::shared_ptr<Session> session_;
  const uint64_t request_;
};

template <class Stream>
constexpr bool kIsTls = !std::is_same_v<Stream, PlainStream>;

}  // namespace

// A prvalue, so that the member is built in place (streams need not be movable).
template <class Stream>
Stream MakeStream(asio::ip::tcp::socket socket, SessionShared* shared) {
  if constexpr (kIsTls<Stream>) {
    return Stream(std::move(socket), *shared->tls);
  } else {
    return Stream(std::move(socket));
  }
}

template <class Stream>
BasicHttpSession<Stream>::BasicHttpSession(asio::ip::tcp::socket socket, SessionShared* shared)
    : stream_(MakeStream<Stream>(std::move(socket), shared)), shared_(shared) {
  beast::error_code ec;
  const auto remote = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
  if (!ec) peer_ = remote.address().to_string();
  // Beast reads as much as the buffer's free capacity, and an empty flat_buffer offers 512
  // bytes: a 2.4 KB predict request took three recvmsg calls. With room for a typical small
  // request, one call reads it all.
  buffer_.reserve(kSmallBody);
}

template <class Stream>
void BasicHttpSession<Stream>::Start() {
  if constexpr (kIsTls<Stream>) {
    // The handshake has its own deadline: a client that connects and says nothing must not
    // hold the connection.
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      beast::get_lowest_layer(self->stream_).expires_after(kHandshakeTimeout);
      self->stream_.async_handshake(asio::ssl::stream_base::server,
                                    [self](beast::error_code ec) { self->OnHandshake(ec); });
    });
  } else {
    // A new connection owes its first header at once: only kept-alive ones may idle.
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      self->ReadHeaderWithin(self->shared_->header_timeout);
    });
  }
}

template <class Stream>
void BasicHttpSession<Stream>::OnHandshake(beast::error_code ec) {
  if (ec) {
    spdlog::debug("TLS handshake failed: {}", ec.message());
    return Close();
  }
  ReadHeaderWithin(shared_->header_timeout);
}

template <class Stream>
void BasicHttpSession<Stream>::ReadHeader() {
  if (buffer_.size() > 0) return ReadHeaderWithin(shared_->header_timeout);  // pipelined
  beast::get_lowest_layer(stream_).expires_after(shared_->idle_timeout);
  stream_.async_read_some(buffer_.prepare(kSmallBody),
                          [self = this->shared_from_this()](beast::error_code ec, size_t bytes) {
                            if (ec) return self->Close();
                            self->buffer_.commit(bytes);
                            self->ReadHeaderWithin(self->shared_->header_timeout);
                          });
}

// Between requests a connection may idle (idle_timeout) until the next request's first
// bytes arrive; from then on its header has header_timeout, as a new connection's has.
template <class Stream>
void BasicHttpSession<Stream>::ReadHeaderWithin(std::chrono::seconds timeout) {
  parser_.emplace();
  parser_->body_limit(shared_->max_request_bytes);
  beast::get_lowest_layer(stream_).expires_after(timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

template <class Stream>
void BasicHttpSession<Stream>::OnHeader(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    // In the protocol's shape: an OpenAI client reads {"error": {"message", ...}}.
    return RejectAndClose(InPathErrorShape(
        RequestView().path,
        ErrorReply(413, StrCat("the request body is larger than the server's limit of ",
                               shared_->max_request_bytes,
                               " bytes (--max-request-bytes); send smaller batches"))));
  }
  if (ec) {
    // end_of_stream and timeouts are a client going away; anything else is not HTTP.
    if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
        ec != asio::error::operation_aborted && ec != asio::error::connection_reset &&
        ec != asio::error::eof) {
      return RejectAndClose(ErrorReply(400, StrCat("malformed HTTP request: ", ec.message())));
    }
    return Close();
  }
  // Credentials are checked now, from the header alone: an unauthenticated client must not
  // get "100 Continue" or make the server buffer a body of up to --max-request-bytes before
  // its 401. Refused requests get a lingering close, as a 413 does (the body is discarded).
  if (std::optional<HttpReply> refused = shared_->router->RefuseBeforeBody(RequestView())) {
    return RejectAndClose(*std::move(refused));
  }
  // curl and others wait for "100 Continue" before sending a large body; without it they
  // stall for a second.
  const auto expect = parser_->get().find(http::field::expect);
  if (expect != parser_->get().end() && beast::iequals(expect->value(), "100-continue")) {
    auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                      parser_->get().version());
    http::async_write(
        stream_, *interim,
        [self = this->shared_from_this(), interim](beast::error_code write_ec, size_t) {
          if (write_ec) return self->Close();
          self->ReadBody();
        });
    return;
  }
  ReadBody();
}

template <class Stream>
void BasicHttpSession<Stream>::ReadBody() {
  // Beast reads into buffer_ in chunks of its free capacity: a 3 MB image body took 6,000
  // reads and 19 ms with 512-byte chunks. Large bodies get a large buffer for this request.
  if (const auto length = parser_->content_length(); length && *length > kSmallBody) {
    buffer_.reserve(static_cast<size_t>(std::min<uint64_t>(*length, kLargeReadChunk)));
  }
  beast::get_lowest_layer(stream_).expires_after(shared_->body_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

template <class Stream>
void BasicHttpSession<Stream>::OnBody(beast::error_code ec) {
  if (ec == http::error::body_limit) return OnHeader(ec);
  if (ec) return Close();

  shared_->in_flight.fetch_add(1);
  request_counted_ = true;
  ++request_number_;
  answered_ = false;
  http::request<http::string_body>& request = parser_->get();
  keep_alive_ = request.keep_alive();
  head_request_ = request.method() == http::verb::head;
  HttpRequestView view = RequestView();
  view.body = &request.body();
  BeginRecord(std::string_view(request.method_string().data(), request.method_string().size()),
              view.path, view.Header(kRequestIdHeader));
  auto responder = std::make_shared<SessionResponder<BasicHttpSession>>(this->shared_from_this());
  purge_after_reply_ = request.body().size() > kPurgeAfterBodyBytes;
  if (request.body().size() > kOffloadBodyBytes && shared_->large_body_pool != nullptr) {
    // The session reads nothing more until the reply, so the view's buffers stay put.
    asio::post(*shared_->large_body_pool,
               [router = shared_->router, view = std::move(view),
                responder = std::move(responder)] { router->Dispatch(view, responder); });
    return;
  }
  shared_->router->Dispatch(view, std::move(responder));
}

template <class Stream>
HttpRequestView BasicHttpSession<Stream>::RequestView() {
  http::request<http::string_body>& request = parser_->get();
  const std::string_view target(request.target().data(), request.target().size());
  const size_t question = target.find('?');
  HttpRequestView view;
  view.method = ToMethod(request.method());
  view.path = target.substr(0, question);
  view.query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  for (const auto& field : request) {
    view.headers.emplace_back(
        std::string_view(field.name_string().data(), field.name_string().size()),
        std::string_view(field.value().data(), field.value().size()));
  }
  view.peer = peer_;
  return view;
}

template <class Stream>
void BasicHttpSession<Stream>::BeginRecord(std::string_view method, std::string_view path,
                                           std::string_view id_header) {
  record_.active = true;
  record_.received = Clock::now();
  record_.request_id = RequestIdFrom(id_header);
  record_.method.assign(method);
  record_.path.assign(path);
  record_.model.reset();
  record_.batch_size = 0;
  if (shared_->recorder != nullptr) shared_->recorder->HttpStarted();
}

template <class Stream>
void BasicHttpSession<Stream>::NoteModel(uint64_t request, ModelHandle model) {
  if (request != request_number_ || !record_.active) return;
  record_.model = std::move(model);
}

template <class Stream>
void BasicHttpSession<Stream>::FinishRecord(HttpReply& reply) {
  if (!record_.active) return;
  reply.headers.emplace_back(std::string(kRequestIdHeader), record_.request_id);
  RecordFinished(reply.status, StatusCodeOf(reply),
                 std::string_view(reply.error.message().data(), reply.error.message().size()));
}

template <class Stream>
void BasicHttpSession<Stream>::RecordFinished(unsigned status, absl::StatusCode code,
                                              std::string_view error) {
  if (!record_.active) return;
  record_.active = false;
  if (shared_->recorder != nullptr) {
    FinishedRequest finished;
    finished.request_id = record_.request_id;
    finished.method = record_.method;
    finished.path = record_.path;
    finished.model = record_.model.get();
    finished.code = code;
    finished.http_status = status;
    finished.latency = Clock::now() - record_.received;
    finished.batch_size = record_.batch_size;
    finished.error = error;
    shared_->recorder->Finished(finished);
  }
  // Do not keep the model version pinned while the connection idles.
  record_.model.reset();
}

template <class Stream>
void BasicHttpSession<Stream>::WriteReply(HttpReply reply) {
  answered_ = true;
  FinishRecord(reply);
  const unsigned version = parser_->get().version();
  // While draining, tell clients to reconnect elsewhere instead of reusing this connection.
  if (shared_->draining->load()) keep_alive_ = false;
  WriteResponseHead(reply, version != 0 ? version : 11, keep_alive_, &response_head_);
  response_body_ = std::move(reply.body);
  // A reply to HEAD announces its body's length but carries no body.
  const std::array<asio::const_buffer, 2> buffers{
      asio::buffer(response_head_),
      head_request_ ? asio::const_buffer() : asio::buffer(response_body_)};
  beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
  asio::async_write(
      stream_, buffers,
      [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnWrite(ec); });
}

template <class Stream>
void BasicHttpSession<Stream>::OnWrite(beast::error_code ec) {
  if (request_counted_) {
    request_counted_ = false;
    shared_->in_flight.fetch_sub(1);
  }
  // The parser is no longer needed once the reply is out; free both bodies now.
  parser_.reset();
  std::string().swap(response_body_);
  if (purge_after_reply_) {
    // A large JSON body's parser memory (about ten times the body) is free now, but the
    // allocator keeps freed pages (jemalloc never decays here, for speed): without a purge
    // one 60 MB body left the process hundreds of MB larger for good.
    if (shared_->large_body_pool != nullptr) {
      asio::post(*shared_->large_body_pool, [] { ReleaseFreedMemory(); });
    }
  }
  purge_after_reply_ = false;
  on_disconnect_ = nullptr;
  if (watching_) {
    // The disconnect watch still has a read outstanding: cancel it; its handler goes on to
    // the next request (or closes). The read buffer is left alone until then: the read
    // writes into it, from whichever I/O thread runs the reactor.
    if (ec || !keep_alive_) return Close();
    reply_done_ = true;
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().cancel(ignored);
    return;
  }
  if (ec || !keep_alive_) return DiscardAndClose();
  ShrinkReadBuffer();
  ReadHeader();
}

// Gives back a large read buffer so that idle keep-alive connections stay small. Only with
// no read outstanding: shrinking frees the memory a pending read (the disconnect watch)
// writes into, and with several I/O threads another thread's reactor does that write while
// this one runs (a use-after-free; with one thread, bytes already read were lost).
template <class Stream>
void BasicHttpSession<Stream>::ShrinkReadBuffer() {
  if (buffer_.capacity() > kSmallBody && buffer_.size() == 0) {
    buffer_.shrink_to_fit();
    buffer_.reserve(kSmallBody);
  }
}

template <class Stream>
void BasicHttpSession<Stream>::RejectAndClose(HttpReply reply) {
  keep_alive_ = false;
  head_request_ = false;
  shared_->in_flight.fetch_add(1);
  request_counted_ = true;
  if (!parser_) parser_.emplace();
  if (!record_.active) {
    const auto& head = parser_->get();
    const std::string_view target(head.target().data(), head.target().size());
    BeginRecord(std::string_view(head.method_string().data(), head.method_string().size()),
                target.substr(0, target.find('?')), {});
  }
  WriteReply(std::move(reply));
}

// A lingering close, as nginx does: stop sending, then read and drop what the client is
// still sending (an oversized body) so it sees our reply instead of a connection reset.
// Over TLS: a close_notify, then close.
template <class Stream>
void BasicHttpSession<Stream>::DiscardAndClose() {
  if constexpr (kIsTls<Stream>) {
    beast::get_lowest_layer(stream_).expires_after(kLingerTimeout);
    stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) { self->Close(); });
    return;
  }
  beast::error_code ignored;
  beast::get_lowest_layer(stream_).socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  beast::get_lowest_layer(stream_).expires_after(kLingerTimeout);
  auto scratch = std::make_shared<std::array<char, 16384>>();
  struct Drain {
    std::shared_ptr<BasicHttpSession> self;
    std::shared_ptr<std::array<char, 16384>> scratch;
    void operator()(beast::error_code ec, size_t) {
      if (ec) return self->Close();
      self->stream_.async_read_some(asio::buffer(*scratch), std::move(*this));
    }
  };
  stream_.async_read_some(asio::buffer(*scratch), Drain{this->shared_from_this(), scratch});
}

template <class Stream>
void BasicHttpSession<Stream>::Close() {
  beast::error_code ignored;
  beast::get_lowest_layer(stream_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(stream_).close();
}

template class BasicHttpSession<PlainStream>;
template class BasicHttpSession<TlsStream>;

}  // namespace inferd
