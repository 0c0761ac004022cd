// The Prometheus series of one model version, created when it loads. The hot path calls
// these through ModelObserver and touches only metric objects it already holds (atomic
// counters, histograms): no label lookup per request.
// Thread-safety: thread-safe (prometheus-cpp metrics are).
#ifndef INFERD_OBSERVABILITY_MODEL_METRICS_H_
#define INFERD_OBSERVABILITY_MODEL_METRICS_H_

#include <array>
#include <cstdint>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include "core/scheduling/model_observer.h"
#include "observability/request_outcome.h"

namespace inferd {

struct MetricFamilies;  // observability/metrics_registry.h

class ModelMetrics : public ModelObserver {
 public:
  // Adds (or finds, on a reload) this version's series in `families`, which must outlive it.
  ModelMetrics(MetricFamilies& families, const prometheus::Labels& labels);

  void OnBatchExecuted(int64_t rows, const BatchTimes& times) override;
  void OnRequestDequeued(Duration queued) override;
  void OnRequestFinished(absl::StatusCode code, Duration latency) override;
  void OnCacheLookup(bool hit) override { (hit ? cache_hits_ : cache_misses_)->Increment(); }

  // Set at scrape time from the scheduler.
  void SetQueueDepth(size_t requests) { queue_depth_->Set(static_cast<double>(requests)); }

 private:
  std::array<prometheus::Counter*, kRequestOutcomeCount> requests_{};
  prometheus::Histogram* request_seconds_;
  prometheus::Histogram* queue_seconds_;
  prometheus::Histogram* compute_seconds_;
  prometheus::Histogram* batch_rows_;
  prometheus::Counter* inferences_;
  prometheus::Gauge* queue_depth_;
  prometheus::Counter* cache_hits_;
  prometheus::Counter* cache_misses_;
};

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_MODEL_METRICS_H_
