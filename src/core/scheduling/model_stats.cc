#include "core/scheduling/model_stats.h"

#include "core/scheduling/model_observer.h"

namespace inferd {
void ModelStats::RecordExecution(int64_t rows, const BatchTimes& times) {
  if (observer_) observer_->OnBatchExecuted(rows, times);
  MutexLock lock(&mu_);
  stats_.inference_count += static_cast<uint64_t>(rows);
  ++stats_.execution_count;
  ModelStatsSnapshot::PerBatchSize& per_size = stats_.batch_stats[rows];
  per_size.compute_input.Add(times.compute_input);
  per_size.compute_infer.Add(times.compute_infer);
  per_size.compute_output.Add(times.compute_output);
}

void ModelStats::RecordSuccess(Duration queue, const BatchTimes& times, Duration total) {
  if (observer_) observer_->OnRequestDequeued(queue);
  MutexLock lock(&mu_);
  stats_.success.Add(total);
  stats_.queue.Add(queue);
  stats_.compute_input.Add(times.compute_input);
  stats_.compute_infer.Add(times.compute_infer);
  stats_.compute_output.Add(times.compute_output);
  stats_.last_inference_ms = WallClockMs();
}

void ModelStats::RecordFailure(Duration total) {
  MutexLock lock(&mu_);
  stats_.fail.Add(total);
}

void ModelStats::RecordCacheHit(Duration lookup) {
  if (observer_) observer_->OnCacheLookup(/*hit=*/true);
  MutexLock lock(&mu_);
  stats_.cache_hit.Add(lookup);
  stats_.success.Add(lookup);
  stats_.last_inference_ms = WallClockMs();
}

void ModelStats::RecordCacheMiss(Duration lookup_and_insert) {
  if (observer_) observer_->OnCacheLookup(/*hit=*/false);
  MutexLock lock(&mu_);
  stats_.cache_miss.Add(lookup_and_insert);
}

ModelStatsSnapshot ModelStats::Snapshot() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace inferd
