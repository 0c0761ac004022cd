#include "core/scheduling/batch_tuner.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// Each size runs at least kMinRuns times and at most kMaxRuns times, stopping early once
// kTimePerSize is spent: a 0.05 ms MLP needs many runs for a stable median, a 200 ms ResNet
// batch only a few.
constexpr size_t kMinRuns = 5;
constexpr size_t kMaxRuns = 200;
constexpr auto kTimePerSize = std::chrono::milliseconds(300);

std::vector<int64_t> CandidateSizes(const ModelConfig& config) {
  std::set<int64_t> sizes;
  for (int64_t b = 1; b < config.max_batch_size; b *= 2) sizes.insert(b);
  sizes.insert(config.max_batch_size);
  for (int b : config.dynamic_batching.preferred_batch_sizes) sizes.insert(b);
  return {sizes.begin(), sizes.end()};
}

double Milliseconds(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

absl::StatusOr<double> MedianLatencyMs(const ModelConfig& config, BackendModel& model,
                                       const TimeSource& time, int64_t batch) {
  std::vector<Tensor> inputs;
  for (const TensorSpec& spec : config.inputs) {
    ASSIGN_OR_RETURN(Tensor input,
                     Tensor::Allocate(spec.datatype, config.ExampleShape(spec, batch)));
    inputs.push_back(std::move(input));
  }
  // Untimed: the first runs at a new shape pay for allocation and graph specialisation.
  for (int i = 0; i < 2; ++i) RETURN_IF_ERROR(model.Execute(inputs).status());
  std::vector<double> latencies;
  const TimePoint budget_end = time.Now() + kTimePerSize;
  while (latencies.size() < kMinRuns || (latencies.size() < kMaxRuns && time.Now() < budget_end)) {
    const TimePoint start = time.Now();
    RETURN_IF_ERROR(model.Execute(inputs).status());
    latencies.push_back(Milliseconds(time.Now() - start));
  }
  std::sort(latencies.begin(), latencies.end());
  return latencies[latencies.size() / 2];
}

}  // namespace

BatchPolicy PolicyFromConfig(const ModelConfig& config) {
  BatchPolicy policy;
  policy.dynamic = config.dynamic_batching.enabled;
  policy.max_rows = std::max(1, config.max_batch_size);
  policy.max_queue_delay = std::chrono::microseconds(config.dynamic_batching.max_queue_delay_us);
  policy.preferred_batch_sizes = config.dynamic_batching.preferred_batch_sizes;
  return policy;
}

absl::StatusOr<BatchTuning> TuneBatchSize(const ModelConfig& config, BackendModel& model,
                                          const TimeSource& time) {
  BatchTuning tuning;
  tuning.latency_slo_ms = config.dynamic_batching.latency_slo_ms;
  const double delay_ms = config.dynamic_batching.max_queue_delay_us / 1000.0;
  double best = -1;
  for (int64_t batch : CandidateSizes(config)) {
    ASSIGN_OR_RETURN(double latency_ms, MedianLatencyMs(config, model, time, batch));
    BatchSizeMeasurement m;
    m.batch_size = batch;
    m.latency_ms = latency_ms;
    m.items_per_s = latency_ms > 0 ? batch * 1000.0 / latency_ms : 0;
    m.within_slo = 2 * latency_ms + delay_ms <= tuning.latency_slo_ms;
    // Larger batches must beat the best so far by 3 %: within noise, the smaller batch has
    // the lower latency for the same throughput.
    if (m.within_slo && m.items_per_s > best * 1.03) {
      best = m.items_per_s;
      tuning.chosen = batch;
    }
    tuning.table.push_back(m);
    // Latency grows with the batch: once over the SLO, larger sizes are too.
    if (!m.within_slo && batch > 1) break;
  }
  return tuning;
}

BatchPolicy ApplyTuning(BatchPolicy policy, const BatchTuning& tuning) {
  policy.max_rows = tuning.chosen;
  policy.preferred_batch_sizes = {static_cast<int>(tuning.chosen)};
  return policy;
}

std::string DescribeTuning(const BatchTuning& tuning) {
  std::string text;
  for (const BatchSizeMeasurement& m : tuning.table) {
    char line[160];
    std::snprintf(line, sizeof(line), "%sbatch %lld: %.2f ms, %.0f items/s, %s%s",
                  text.empty() ? "" : "\n", static_cast<long long>(m.batch_size), m.latency_ms,
                  m.items_per_s, m.within_slo ? "within SLO" : "over SLO",
                  m.batch_size == tuning.chosen ? " <- chosen" : "");
    text += line;
  }
  return text;
}

}  // namespace inferd
