// The responses of one ModelStreamInfer stream waiting to be written, bounded (issue 30: a
// client that did not read grew the server by hundreds of megabytes).
//
// gRPC allows one write in flight per stream; what the model produces meanwhile waits here.
// Two kinds of response wait, and they are bounded differently:
//
// - A request's last response (its only one for a tensor model, the final one of a
//   generation) is always taken. Their number is bounded by the reader instead: the reactor
//   reads the client's next request only while fewer than max_unanswered requests wait for
//   their last response to be written (MayRead), so a client that does not read stops being
//   read, and its requests wait in its own HTTP/2 window.
// - A piece of a streamed generation is produced by the server, as fast as the model goes,
//   whether the client reads or not. Past max_pieces or max_bytes queued, Push refuses it and
//   the reactor cuts the stream: its generations are cancelled and the call ends with
//   RESOURCE_EXHAUSTED. Cutting rather than merging pieces: a client that does not take
//   megabytes of text is gone or hostile, and a generation that goes on for it holds one of
//   the model's few sequence slots that other clients are waiting for.
//
// Thread-safety: none; the reactor guards it with its mutex. Ownership: holds the queued
// messages; the front one stays put (gRPC reads it) until PopFront.
#ifndef INFERD_FRONTENDS_GRPC_STREAM_WRITE_QUEUE_H_
#define INFERD_FRONTENDS_GRPC_STREAM_WRITE_QUEUE_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>

namespace inferd {

struct StreamWriteLimits {
  size_t max_unanswered = 64;          // requests read whose last response is not written yet
  size_t max_pieces = 1024;            // queued responses before a generation's piece is refused
  size_t max_bytes = size_t{8} << 20;  // their serialized size, likewise
};

template <class Message>
class StreamWriteQueue {
 public:
  explicit StreamWriteQueue(StreamWriteLimits limits = {}) : limits_(limits) {}

  // A request was read: its responses will follow, the last one with `last`.
  void RequestRead() { ++unanswered_; }
  // Whether to read the client's next request now.
  bool MayRead() const { return unanswered_ < limits_.max_unanswered; }

  // Queues `message` of `bytes` (serialized). `last`: its request's last response, always
  // taken. Otherwise false, and the message is dropped, when the queue holds max_pieces
  // messages or the message would take it past max_bytes; a message into an empty queue is
  // always taken (one message is bounded by the server's message size limit).
  bool Push(std::unique_ptr<Message> message, size_t bytes, bool last) {
    if (!last && !entries_.empty() &&
        (entries_.size() >= limits_.max_pieces || bytes_ >= limits_.max_bytes ||
         bytes > limits_.max_bytes - bytes_)) {
      return false;
    }
    bytes_ += bytes;
    entries_.push_back(Entry{std::move(message), bytes, last});
    return true;
  }

  // A request's last response will never be written (the stream is broken): it counts as
  // answered.
  void Answered() { --unanswered_; }

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }
  size_t unanswered() const { return unanswered_; }
  const StreamWriteLimits& limits() const { return limits_; }
  Message* front() const { return entries_.front().message.get(); }

  // The front message was written (or its write failed): removes it.
  void PopFront() {
    Entry& entry = entries_.front();
    bytes_ -= entry.bytes;
    if (entry.last) --unanswered_;
    entries_.pop_front();
  }

  // Drops every queued message but the front one when `keep_front` (gRPC is writing it).
  void DropQueued(bool keep_front) {
    while (entries_.size() > (keep_front ? 1u : 0u)) {
      Entry& entry = entries_.back();
      bytes_ -= entry.bytes;
      if (entry.last) --unanswered_;
      entries_.pop_back();
    }
  }

 private:
  struct Entry {
    std::unique_ptr<Message> message;
    size_t bytes = 0;
    bool last = false;
  };

  const StreamWriteLimits limits_;
  std::deque<Entry> entries_;
  size_t bytes_ = 0;
  size_t unanswered_ = 0;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_STREAM_WRITE_QUEUE_H_
