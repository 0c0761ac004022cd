// The sequences a decode loop has not started yet, and the rules for starting them: how many
// may wait (max_queue counts sequences, and a request with n choices is n of them, reserved
// while its prompt is prepared), which are dropped before they start (cancelled, past their
// deadline), and which free slot each takes (the longest reusable prefix of its prompt,
// within its own cache partition, in arrival order).
//
// Free of llama.cpp types, so the rules are unit-tested without a GGUF file (the decode loop
// itself needs the engine). Not thread-safe: the engine guards it with its mutex.
#ifndef INFERD_BACKENDS_LLAMA_SEQUENCE_QUEUE_H_
#define INFERD_BACKENDS_LLAMA_SEQUENCE_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/clock.h"
#include "core/backend/generation.h"

struct llama_sampler;

namespace inferd {

struct ChatToolPrompt;

// One choice of a prepared request. The choices of a request share it, and its tokens.
struct QueuedChoice {
  std::shared_ptr<GenerateRequest> request;
  std::shared_ptr<const std::vector<int32_t>> prompt;
  int choice = 0;
  int64_t max_tokens = 0;
  // The request's compiled output grammar (null: free text), shared by its choices; opaque
  // here (a llama.cpp sampler).
  std::shared_ptr<const llama_sampler> grammar;
  // The request's tools in the model's own format (chat_tool_format.h): its stops, and how
  // the reply is read back when it ends. Null: none.
  std::shared_ptr<const ChatToolPrompt> tool_prompt;
};

// A free slot as admission sees it.
struct FreeSlot {
  size_t index = 0;                 // the engine's slot number
  std::span<const int32_t> cached;  // the tokens its KV cache holds
  std::string_view partition;       // whose they are (GenerateRequest::cache_partition)
  uint64_t last_used = 0;
};

class SequenceQueue {
 public:
  // `max_sequences`: parameters.max_queue; `parallel`: the slots (for messages).
  SequenceQueue(int64_t max_sequences, int parallel);

  // Reserves room for a request of `n` choices while its prompt is prepared: ResourceExhausted
  // naming the limit when the waiting sequences and `n` would pass it.
  absl::Status Reserve(int n);
  // Ends a reservation: with `choices` (its prepared sequences, queued in order) or without
  // (the request was refused while it was prepared).
  void Release(int n, std::vector<QueuedChoice> choices = {});

  // Removes the queued choices that were cancelled or are past their deadline at `now`, each
  // with the reason.
  std::vector<std::pair<QueuedChoice, absl::Status>> DropFinished(TimePoint now);

  // Starts queued choices in arrival order while free slots last; each takes the free slot
  // with the longest reusable prefix of its prompt in its partition (another partition's cache
  // counts as empty), the least recently used among equals. Returns (slot index, choice).
  std::vector<std::pair<size_t, QueuedChoice>> Admit(std::vector<FreeSlot> free);

  // Everything queued (shutting down); reservations stay until released.
  std::deque<QueuedChoice> TakeAll();

  bool empty() const { return queue_.empty(); }
  // Reserved and queued sequences: what waits for a slot.
  int64_t waiting() const { return reserved_ + static_cast<int64_t>(queue_.size()); }

 private:
  const int64_t max_sequences_;
  const int parallel_;
  int64_t reserved_ = 0;
  std::deque<QueuedChoice> queue_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_SEQUENCE_QUEUE_H_
