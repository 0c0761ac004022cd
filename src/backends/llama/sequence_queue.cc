#include "backends/llama/sequence_queue.h"

#include <atomic>

#include "backends/llama/slot_choice.h"
#include "common/strings.h"

namespace inferd {

SequenceQueue::SequenceQueue(int64_t max_sequences, int parallel)
    : max_sequences_(max_sequences), parallel_(parallel) {}

absl::Status SequenceQueue::Reserve(int n) {
  if (waiting() + n > max_sequences_) {
    return absl::ResourceExhaustedError(StrCat("the model's queue is full: ", waiting(),
                                               " sequences wait for one of ", parallel_,
                                               " (parameters.max_queue ", max_sequences_, ")"));
  }
  reserved_ += n;
  return absl::OkStatus();
}

void SequenceQueue::Release(int n, std::vector<QueuedChoice> choices) {
  reserved_ -= n;
  for (QueuedChoice& choice : choices) queue_.push_back(std::move(choice));
}

std::vector<std::pair<QueuedChoice, absl::Status>> SequenceQueue::DropFinished(TimePoint now) {
  std::vector<std::pair<QueuedChoice, absl::Status>> dropped;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const GenerateRequest& request = *it->request;
    absl::Status why;
    if (request.cancelled->load(std::memory_order_acquire)) {
      why = absl::CancelledError("the client went away");
    } else if (request.deadline && now >= *request.deadline) {
      why = absl::DeadlineExceededError(
          "the request's deadline passed while it waited for a free sequence");
    }
    if (why.ok()) {
      ++it;
      continue;
    }
    dropped.emplace_back(std::move(*it), std::move(why));
    it = queue_.erase(it);
  }
  return dropped;
}

std::vector<std::pair<size_t, QueuedChoice>> SequenceQueue::Admit(std::vector<FreeSlot> free) {
  std::vector<std::pair<size_t, QueuedChoice>> admitted;
  while (!free.empty() && !queue_.empty()) {
    QueuedChoice next = std::move(queue_.front());
    queue_.pop_front();
    std::vector<SlotCandidate> candidates;
    candidates.reserve(free.size());
    for (const FreeSlot& slot : free) {
      const bool mine = slot.partition == next.request->cache_partition;
      candidates.push_back({mine ? slot.cached : std::span<const int32_t>(), slot.last_used});
    }
    const size_t chosen = ChooseSlot(candidates, *next.prompt);
    admitted.emplace_back(free[chosen].index, std::move(next));
    free.erase(free.begin() + static_cast<std::ptrdiff_t>(chosen));
  }
  return admitted;
}

std::deque<QueuedChoice> SequenceQueue::TakeAll() { return std::exchange(queue_, {}); }

}  // namespace inferd
