// Decides which queued requests run together, and when. Pure logic over a RequestQueue and a
// time point, so batch formation is unit-tested deterministically without threads or sleeps.
//
// Policy (as Triton's dynamic batcher): the head is the oldest request of the highest
// priority; requests shape-compatible with it join in service order while they fit in
// max_rows. The batch runs at once when it is full or reaches the largest preferred size;
// otherwise it waits until the head has waited max_queue_delay, then runs the largest
// preferred size it can form exactly, or everything it has.
//
// Backlog mode (set by auto-tuning): once the queue holds `backlog_rows` rows or more, a new
// request would miss the latency SLO whatever the batch size, so latency is best served by
// draining the queue fastest: batches of up to `backlog_max_rows` (the size with the best
// measured throughput) run at once, without waiting for preferred sizes or the delay.
#ifndef INFERD_CORE_SCHEDULING_BATCH_PLANNER_H_
#define INFERD_CORE_SCHEDULING_BATCH_PLANNER_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "core/scheduling/request_queue.h"

namespace inferd {

struct BatchPolicy {
  bool dynamic = false;  // false: every request runs alone
  int64_t max_rows = 1;
  Duration max_queue_delay{0};
  std::vector<int> preferred_batch_sizes;  // ascending
  int64_t backlog_rows = 0;                // 0: no backlog mode
  int64_t backlog_max_rows = 0;
};

struct BatchPlan {
  // Queue positions (level, index) to run now, in service order; empty: nothing yet.
  std::vector<std::pair<size_t, size_t>> positions;
  // When nothing runs now: the time at which the plan changes unless a request arrives.
  std::optional<TimePoint> decide_again_at;
};

BatchPlan PlanBatch(const RequestQueue& queue, const BatchPolicy& policy, TimePoint now);

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_BATCH_PLANNER_H_
