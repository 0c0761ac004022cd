// One client connection: reads requests, hands them to the router, writes the replies.
//
// A session's handlers never run concurrently: they run on its own strand, or, with one I/O
// thread, on that thread (HttpServer's ConnectionExecutor); replies from execution threads are
// posted onto that executor ("the strand" below means whichever of the two it is). Requests on one
// connection are answered in order: the next request is read only after the previous reply is
// written (HTTP/1.1 without pipelining, as every mainstream client behaves).
#ifndef INFERD_FRONTENDS_HTTP_TRANSPORT_HTTP_SESSION_H_
#define INFERD_FRONTENDS_HTTP_TRANSPORT_HTTP_SESSION_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "frontends/http/http_types.h"
#include "frontends/http/routing/router.h"
#include "frontends/http/session_request.h"
#include "frontends/http/transport/open_streams.h"
#include "observability/request_recorder.h"

namespace inferd {

// What every session shares with the server.
struct SessionShared {
  const HttpRouter* router = nullptr;
  std::atomic<bool>* draining = nullptr;
  std::atomic<int64_t> in_flight{0};  // requests read and not yet answered
  size_t max_request_bytes = 0;
  // What may wait to be written to a streaming client beside the write in flight before
  // the stream is cut (HttpServerOptions::max_stream_backlog_bytes).
  size_t max_stream_backlog_bytes = 0;
  std::chrono::seconds idle_timeout{120};
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds body_timeout{60};
  RequestRecorder* recorder = nullptr;  // metrics and access log; null: none
  OpenStreams streams;                  // streamed replies in progress, for the shutdown deadline
  boost::asio::ssl::context* tls = nullptr;  // set: connections speak TLS (HttpsSession)
  // Where requests with a body over kOffloadBodyBytes are handed to the router: parsing a
  // 60 MB JSON body took the I/O thread for a third of a second, and every other connection
  // on it waited. Null: on the I/O thread.
  boost::asio::thread_pool* large_body_pool = nullptr;
};

// Bodies above this are decoded off the I/O thread.
inline constexpr size_t kOffloadBodyBytes = 1u << 20;
// After the reply to a body above this, the allocator returns freed memory to the kernel: a
// body's decoding takes about ten times its size, which the allocator would otherwise keep
// for good. Not after smaller bodies: the purge also returns the pages a model's forward pass
// has just freed, and after every resnet18 JSON request (1.7 MB) the next pass faulted
// ~6,000 pages in again: 41.8 ms per pass against 28.1 ms without the purge
// (bench/results/2026-12-03-openmp-teams.md).
inline constexpr size_t kPurgeAfterBodyBytes = 16u << 20;

// `Stream` is a plain TCP stream or a TLS stream over one (HttpSession, HttpsSession); the
// plaintext session is exactly the code it was before TLS existed, so TLS costs it nothing.
template <class Stream>
class BasicHttpSession : public std::enable_shared_from_this<BasicHttpSession<Stream>> {
 public:
  BasicHttpSession(boost::asio::ip::tcp::socket socket, SessionShared* shared);

  void Start();

  // Writes `reply` for the current request; must run on the session's strand.
  void WriteReply(HttpReply reply);

  // A streamed reply for the current request (http_session_stream.cc); on the strand.
  // BeginStream sends the head, StreamWrite one piece, StreamEnd the last one.
  // Each takes the number of the request it belongs to (request_number() when its responder
  // was made) and does nothing for an earlier request's stream.
  void BeginStream(uint64_t request, HttpReply head);
  void StreamWrite(uint64_t request, std::string data);
  void StreamEnd(uint64_t request, std::string data);
  // Ends the stream of `request` now, as the shutdown deadline passes: its producer is
  // told (on_disconnect) and the client gets a final error event and the terminator.
  void EndStreamForShutdown(uint64_t request);
  // Reads from the socket while the current request is being answered, so that a client
  // closing the connection is noticed (then `on_disconnect` runs, once). What it reads
  // instead (a pipelined request) is kept for the next request, up to a bound. On the
  // strand. Over TLS the read goes through the TLS stream and the reply ends the connection
  // (`Connection: close`), so that the read never has to be cancelled mid-record.
  void WatchDisconnect(uint64_t request, std::function<void()> on_disconnect);
  // Counts the requests read on this connection; on the strand.
  uint64_t request_number() const { return request_number_; }

  auto executor() { return stream_.get_executor(); }
  // Notes in the record the model version `request` reached, unless that request has been
  // answered already (a client that left while its model loaded). On the strand.
  void NoteModel(uint64_t request, ModelHandle model);
  // The current request's record; on the session's strand only.
  SessionRequest* record() { return &record_; }

 private:
  void ReadHeader();
  void OnHandshake(boost::beast::error_code ec);
  void ReadHeaderWithin(std::chrono::seconds timeout);
  void OnHeader(boost::beast::error_code ec);
  // The parsed request's method, path, query, headers and peer (no body); views into
  // parser_ and peer_.
  HttpRequestView RequestView();
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  void RejectAndClose(HttpReply reply);
  void OnWrite(boost::beast::error_code ec);
  void ShrinkReadBuffer();
  void DiscardAndClose();
  void Close();
  void FlushStream();
  void OnStreamWrite(boost::beast::error_code ec);
  void ArmWatch();
  void OnWatch(boost::beast::error_code ec, size_t bytes);
  // Abandons a stream whose client stopped reading (http_session_stream.cc).
  void CutSlowReader();
  // Records the finished request (its HTTP status, the code it is counted under and its
  // error message) for metrics and the access log.
  void RecordFinished(unsigned status, absl::StatusCode code, std::string_view error);

  Stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::string response_head_;  // reused: the status line and header fields
  std::string response_body_;
  SessionShared* const shared_;
  std::string peer_;  // the client's IP address as text; empty when unknown
  bool keep_alive_ = false;
  bool head_request_ = false;
  bool request_counted_ = false;
  bool purge_after_reply_ = false;  // the current request's body is over kPurgeAfterBodyBytes
  SessionRequest record_;
  // A streamed reply in progress: what waits to be written, what is being written.
  bool streaming_ = false;
  bool stream_ending_ = false;
  bool stream_writing_ = false;
  bool stream_chunked_ = true;
  std::string stream_pending_;
  uint64_t stream_registration_ = 0;  // in shared_->streams; 0: none
  // Leaves shared_->streams (the stream is over, one way or another).
  void UnregisterStream();
  std::string stream_inflight_;
  // The disconnect watch (WatchDisconnect): a read outstanding on the socket.
  uint64_t request_number_ = 0;
  bool answered_ = false;  // the current request's reply has been started or sent
  bool watching_ = false;
  bool reply_done_ = false;  // the reply is out; the watch read is being cancelled
  std::function<void()> on_disconnect_;
  // Starts the record of a request that has been read (or rejected while reading).
  void BeginRecord(std::string_view method, std::string_view path, std::string_view id_header);
  // Records the finished request; adds its id to the reply headers.
  void FinishRecord(HttpReply& reply);
};

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
using HttpSession = BasicHttpSession<PlainStream>;
using HttpsSession = BasicHttpSession<TlsStream>;
extern template class BasicHttpSession<PlainStream>;
extern template class BasicHttpSession<TlsStream>;

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_TRANSPORT_HTTP_SESSION_H_
