// The queue of one model: a FIFO per priority level, bounded in total size.
//
// Not thread-safe: the Scheduler guards it with its mutex.
#ifndef INFERD_CORE_SCHEDULING_REQUEST_QUEUE_H_
#define INFERD_CORE_SCHEDULING_REQUEST_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "common/clock.h"
#include "core/scheduling/pending_request.h"

namespace inferd {

class RequestQueue {
 public:
  // `max_size` 0 means unbounded.
  RequestQueue(int priority_levels, size_t max_size);

  bool full() const { return max_size_ != 0 && size_ >= max_size_; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Batch rows of every queued request together.
  int64_t rows() const { return rows_; }

  // Adds at the back of its priority level (clamped to the valid range); the caller checks
  // full() first.
  void Push(PendingRequest pending);

  // Moves every request whose deadline is at or before `now` into `expired`.
  void TakeExpired(TimePoint now, std::vector<PendingRequest>* expired);

  // The earliest deadline of any queued request.
  std::optional<TimePoint> EarliestDeadline() const;

  // Requests in service order: highest priority first, oldest first within a level.
  // `visit(level, index, pending)` returns false to stop.
  template <typename Visitor>
  void ForEachInOrder(Visitor visit) const {
    for (size_t level = 0; level < levels_.size(); ++level) {
      for (size_t i = 0; i < levels_[level].size(); ++i) {
        if (!visit(level, i, levels_[level][i])) return;
      }
    }
  }

  // Removes the requests at the given (level, index) positions, which must be listed in
  // service order, and returns them in that order.
  std::vector<PendingRequest> Take(const std::vector<std::pair<size_t, size_t>>& positions);

  // Removes everything, in service order.
  std::vector<PendingRequest> TakeAll();

 private:
  std::vector<std::deque<PendingRequest>> levels_;
  const size_t max_size_;
  size_t size_ = 0;
  int64_t rows_ = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_REQUEST_QUEUE_H_
