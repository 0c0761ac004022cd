// BasicHttpSession's streamed replies and disconnect watch (declared in http_session.h).
//
// A streamed reply is a head with Transfer-Encoding: chunked and then one chunk per piece.
// Pieces arrive on the strand from any producer thread (posted by ReplyStream); while one
// write is in flight the next ones gather in stream_pending_ and go out together, so a
// slow client costs one write per round trip, not one per token, and the producer never
// waits for the socket.
#include <type_traits>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/http_status.h"
#include "common/strings.h"
#include "frontends/http/transport/http_session.h"
#include "frontends/http/transport/response_head.h"
#include "observability/request_id.h"

namespace inferd {
namespace {

namespace beast = boost::beast;
namespace asio = boost::asio;

constexpr std::chrono::seconds kStreamWriteTimeout{60};
constexpr size_t kWatchReadBytes = 4096;
constexpr size_t kMaxWatchBufferedBytes = 64 * 1024;

template <class Stream>
constexpr bool kIsTlsStream = !std::is_same_v<Stream, PlainStream>;

}  // namespace

template <class Stream>
void BasicHttpSession<Stream>::BeginStream(uint64_t request, HttpReply head) {
  if (request != request_number_ || answered_) return;
  answered_ = true;
  streaming_ = true;
  stream_ending_ = false;
  const unsigned version = parser_->get().version();
  stream_chunked_ = version != 10;
  // An HTTP/1.0 body without a length ends with the connection.
  if (!stream_chunked_ || shared_->draining->load()) keep_alive_ = false;
  if (record_.active) {
    head.headers.emplace_back(std::string(kRequestIdHeader), record_.request_id);
  }
  std::string text;
  WriteStreamHead(head, version != 0 ? version : 11, keep_alive_, &text);
  stream_pending_ += text;
  stream_registration_ = shared_->streams.Add(
      [weak = this->weak_from_this(), executor = stream_.get_executor(), request] {
        asio::post(executor, [weak, request] {
          if (auto self = weak.lock()) self->EndStreamForShutdown(request);
        });
      });
  if (head_request_) {
    // HEAD gets the head only.
    stream_ending_ = true;
  }
  FlushStream();
}

template <class Stream>
void BasicHttpSession<Stream>::StreamWrite(uint64_t request, std::string data) {
  if (request != request_number_ || !streaming_ || stream_ending_) return;
  if (stream_chunked_) {
    AppendChunk(data, &stream_pending_);
  } else {
    stream_pending_ += data;
  }
  FlushStream();
  if (stream_writing_ && stream_pending_.size() > shared_->max_stream_backlog_bytes) {
    CutSlowReader();
  }
}

// The client does not read what it asked for: the stream is abandoned as if the client had
// gone (the producer stops through on_disconnect), recorded, and the connection closed; the
// write in flight then fails and finishes the request (OnStreamWrite).
template <class Stream>
void BasicHttpSession<Stream>::CutSlowReader() {
  UnregisterStream();
  streaming_ = false;
  stream_ending_ = false;
  std::string().swap(stream_pending_);
  if (auto callback = std::move(on_disconnect_)) callback();
  RecordFinished(
      499, StatusCodeForHttp(499),
      StrCat("the client did not read the stream: more than ", shared_->max_stream_backlog_bytes,
             " bytes waited to be sent, so the connection was closed"));
  Close();
}

template <class Stream>
void BasicHttpSession<Stream>::StreamEnd(uint64_t request, std::string data) {
  if (request != request_number_ || !streaming_ || stream_ending_) return;
  StreamWrite(request, std::move(data));
  if (!streaming_) return;  // cut as a slow reader
  if (stream_chunked_) stream_pending_ += kLastChunk;
  stream_ending_ = true;
  FlushStream();
}

template <class Stream>
void BasicHttpSession<Stream>::EndStreamForShutdown(uint64_t request) {
  if (request != request_number_ || !streaming_ || stream_ending_) return;
  if (auto callback = std::move(on_disconnect_)) callback();
  // Both event formats (OpenAI's and KServe's) carry errors as {"error": ...}; a client
  // that reads the stream to its end learns why it stopped.
  StreamEnd(request,
            "data: {\"error\": \"the server is shutting down: its drain deadline "
            "(--shutdown-timeout) passed before this generation finished\"}\n\n");
}

template <class Stream>
void BasicHttpSession<Stream>::UnregisterStream() {
  if (stream_registration_ == 0) return;
  shared_->streams.Remove(stream_registration_);
  stream_registration_ = 0;
}

template <class Stream>
void BasicHttpSession<Stream>::FlushStream() {
  if (stream_writing_) return;
  if (stream_pending_.empty()) {
    if (!stream_ending_) return;
    // Everything is out: the request is done.
    UnregisterStream();
    streaming_ = false;
    stream_ending_ = false;
    RecordFinished(200, absl::StatusCode::kOk, {});
    std::string().swap(stream_inflight_);
    OnWrite(beast::error_code());
    return;
  }
  stream_writing_ = true;
  stream_inflight_.swap(stream_pending_);
  stream_pending_.clear();
  beast::get_lowest_layer(stream_).expires_after(kStreamWriteTimeout);
  asio::async_write(
      stream_, asio::buffer(stream_inflight_),
      [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnStreamWrite(ec); });
}

template <class Stream>
void BasicHttpSession<Stream>::OnStreamWrite(beast::error_code ec) {
  stream_writing_ = false;
  stream_inflight_.clear();
  if (ec) {
    // The client went away mid-stream: tell the producer, drop what is left.
    UnregisterStream();
    streaming_ = false;
    stream_ending_ = false;
    stream_pending_.clear();
    if (auto callback = std::move(on_disconnect_)) callback();
    // 499 (nginx's "client closed request") is counted as the client's doing.
    RecordFinished(499, StatusCodeForHttp(499),
                   "the client closed the connection during the stream");
    OnWrite(ec);
    return;
  }
  FlushStream();
}

template <class Stream>
void BasicHttpSession<Stream>::WatchDisconnect(uint64_t request,
                                               std::function<void()> on_disconnect) {
  // Too late for this request (its reply is out, the next read may be running).
  if (request != request_number_ || (answered_ && !streaming_)) return;
  on_disconnect_ = std::move(on_disconnect);
  if (watching_) return;
  if constexpr (kIsTlsStream<Stream>) {
    // Over TLS the watch reads through the TLS stream itself (asio's ssl::stream allows one
    // read and one write outstanding at once, so the reply's writes go on beside it). Such a
    // read cannot be cancelled safely in the middle of a record, so it is never cancelled:
    // the connection closes once the reply is out (`Connection: close`), and the read ends
    // with it. One TLS handshake per generation is small beside the generation itself.
    keep_alive_ = false;
  }
  reply_done_ = false;
  ArmWatch();
}

template <class Stream>
void BasicHttpSession<Stream>::ArmWatch() {
  watching_ = true;
  auto on_read = [self = this->shared_from_this()](beast::error_code ec, size_t bytes) {
    self->OnWatch(ec, bytes);
  };
  if constexpr (kIsTlsStream<Stream>) {
    // The read passes through the tcp_stream: its timer must not end a long generation
    // (a write started later sets only its own timer while this read is pending).
    beast::get_lowest_layer(stream_).expires_never();
    stream_.async_read_some(buffer_.prepare(kWatchReadBytes), std::move(on_read));
  } else {
    // On the socket itself, not the tcp_stream: its timeout must not end a long generation.
    beast::get_lowest_layer(stream_).socket().async_read_some(buffer_.prepare(kWatchReadBytes),
                                                              std::move(on_read));
  }
}

template <class Stream>
void BasicHttpSession<Stream>::OnWatch(beast::error_code ec, size_t bytes) {
  watching_ = false;
  if (!ec) buffer_.commit(bytes);
  if (reply_done_) {
    // The reply went out and cancelled this read: go on with the next request.
    reply_done_ = false;
    if (ec && ec != asio::error::operation_aborted) return Close();
    ShrinkReadBuffer();
    return ReadHeader();
  }
  if (ec) {
    if (ec == asio::error::operation_aborted) return;
    if (auto callback = std::move(on_disconnect_)) callback();
    return;
  }
  // Bytes instead: the client sent its next request early; it waits in buffer_. The watch
  // goes on (one early byte must not hide a disconnect) while what waits stays under
  // kMaxWatchBufferedBytes: room for a pipelined request's header (Beast's limit is 8 KiB)
  // and the start of its body. A client pushing more than that ahead of its reply is held
  // back by TCP flow control instead of our memory; its disconnect is then noticed only by
  // a failing write, as before the watch existed.
  if (on_disconnect_ && buffer_.size() < kMaxWatchBufferedBytes) ArmWatch();
}

// The members defined here, for both kinds of session (http_session.cc instantiates the rest).
#define INFERD_INSTANTIATE_STREAM_MEMBERS(S)                                           \
  template void BasicHttpSession<S>::BeginStream(uint64_t, HttpReply);                 \
  template void BasicHttpSession<S>::StreamWrite(uint64_t, std::string);               \
  template void BasicHttpSession<S>::StreamEnd(uint64_t, std::string);                 \
  template void BasicHttpSession<S>::EndStreamForShutdown(uint64_t);                   \
  template void BasicHttpSession<S>::UnregisterStream();                               \
  template void BasicHttpSession<S>::WatchDisconnect(uint64_t, std::function<void()>); \
  template void BasicHttpSession<S>::FlushStream();                                    \
  template void BasicHttpSession<S>::OnStreamWrite(boost::beast::error_code);          \
  template void BasicHttpSession<S>::OnWatch(boost::beast::error_code, size_t);        \
  template void BasicHttpSession<S>::ArmWatch();                                       \
  template void BasicHttpSession<S>::CutSlowReader();
INFERD_INSTANTIATE_STREAM_MEMBERS(PlainStream)
INFERD_INSTANTIATE_STREAM_MEMBERS(TlsStream)
#undef INFERD_INSTANTIATE_STREAM_MEMBERS

}  // namespace inferd
