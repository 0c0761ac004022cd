#include "observability/model_metrics.h"

#include <chrono>
#include <string>

#include "observability/metrics_registry.h"

namespace inferd {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

prometheus::Labels With(prometheus::Labels labels, const std::string& key,
                        const std::string& value) {
  labels[key] = value;
  return labels;
}

}  // namespace

ModelMetrics::ModelMetrics(MetricFamilies& families, const prometheus::Labels& labels)
    : request_seconds_(&families.request_seconds->Add(labels, LatencyBuckets())),
      queue_seconds_(&families.queue_seconds->Add(labels, LatencyBuckets())),
      compute_seconds_(&families.compute_seconds->Add(labels, LatencyBuckets())),
      batch_rows_(&families.batch_rows->Add(labels, BatchSizeBuckets())),
      inferences_(&families.inferences->Add(labels)),
      queue_depth_(&families.queue_depth->Add(labels)),
      cache_hits_(&families.cache_lookups->Add(With(labels, "result", "hit"))),
      cache_misses_(&families.cache_lookups->Add(With(labels, "result", "miss"))) {
  for (RequestOutcome outcome : kAllRequestOutcomes) {
    requests_[static_cast<size_t>(outcome)] =
        &families.requests->Add(With(labels, "outcome", std::string(OutcomeName(outcome))));
  }
}

void ModelMetrics::OnBatchExecuted(int64_t rows, const BatchTimes& times) {
  batch_rows_->Observe(static_cast<double>(rows));
  inferences_->Increment(static_cast<double>(rows));
  compute_seconds_->Observe(
      Seconds(times.compute_input + times.compute_infer + times.compute_output));
}

void ModelMetrics::OnRequestDequeued(Duration queued) { queue_seconds_->Observe(Seconds(queued)); }

void ModelMetrics::OnRequestFinished(absl::StatusCode code, Duration latency) {
  requests_[static_cast<size_t>(OutcomeForStatus(code))]->Increment();
  request_seconds_->Observe(Seconds(latency));
}

}  // namespace inferd
