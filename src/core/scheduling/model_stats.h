// Per-model-version statistics in the shape of the KServe/Triton statistics extension:
// request counts and cumulative durations per phase, and per batch size.
//
// Thread-safety: every method is thread-safe.
#ifndef INFERD_CORE_SCHEDULING_MODEL_STATS_H_
#define INFERD_CORE_SCHEDULING_MODEL_STATS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "core/types/timings.h"

namespace inferd {

class ModelObserver;  // core/scheduling/model_observer.h

struct ModelStatsSnapshot {
  uint64_t inference_count = 0;   // rows inferred (a request of 4 rows counts 4)
  uint64_t execution_count = 0;   // engine calls (batches)
  int64_t last_inference_ms = 0;  // wall-clock time of the last completed request
  DurationStat success, fail, queue, compute_input, compute_infer, compute_output;
  // Response cache lookups (Triton's fields): a hit's time is the lookup's, and the hit is
  // counted in `success` too (it was answered) but not in inference_count or the compute
  // times (nothing ran); a miss's time is the lookup's and the insertion's.
  DurationStat cache_hit, cache_miss;
  struct PerBatchSize {
    DurationStat compute_input, compute_infer, compute_output;
  };
  std::map<int64_t, PerBatchSize> batch_stats;  // by batch size in rows
};

class ModelStats {
 public:
  // `observer`, when given, is told about every execution and dequeued request as well.
  explicit ModelStats(std::shared_ptr<ModelObserver> observer = nullptr)
      : observer_(std::move(observer)) {}

  // One engine call over `rows` rows.
  void RecordExecution(int64_t rows, const BatchTimes& times);
  // One request answered successfully: its time in the queue, its batch's compute times and
  // its total time from arrival to answer.
  void RecordSuccess(Duration queue, const BatchTimes& times, Duration total);
  // One request that failed (engine error, timeout in the queue, full queue).
  void RecordFailure(Duration total);
  // A request answered from the response cache, `lookup` after it reached the model.
  void RecordCacheHit(Duration lookup);
  // A request the response cache did not hold: the lookup and (for a success) the insertion.
  void RecordCacheMiss(Duration lookup_and_insert);

  ModelStatsSnapshot Snapshot() const;
  ModelObserver* observer() const { return observer_.get(); }

 private:
  const std::shared_ptr<ModelObserver> observer_;
  mutable Mutex mu_;
  ModelStatsSnapshot stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_MODEL_STATS_H_
