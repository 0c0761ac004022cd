#include "core/scheduling/batch_tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "common/cores.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/scheduling/intra_op_probe.h"

namespace inferd {
namespace {

// Each size runs at least kMinRuns times and at most kMaxRuns times, stopping early once
// kTimePerSize is spent: a 0.05 ms MLP needs many runs for a stable median, a 200 ms ResNet
// batch only a few.
constexpr size_t kMinRuns = 5;
constexpr size_t kMaxRuns = 200;
constexpr auto kTimePerSize = std::chrono::milliseconds(300);
// Sizes past the SLO are only for backlog mode; a batch longer than this many SLOs would
// hold every request behind it too long even there.
constexpr double kBacklogLatencyLimitInSlos = 10;
// A larger batch must beat the best throughput so far by this much: within noise, the
// smaller batch has the lower latency for the same throughput.
constexpr double kMinGain = 1.03;

std::vector<int64_t> CandidateSizes(const ModelConfig& config) {
  std::set<int64_t> sizes;
  for (int64_t b = 1; b < config.max_batch_size; b *= 2) sizes.insert(b);
  sizes.insert(config.max_batch_size);
  for (int b : config.dynamic_batching.preferred_batch_sizes) sizes.insert(b);
  return {sizes.begin(), sizes.end()};
}

// On a machine with few cores, a model whose chosen batch runs in under kSmallRunMs on one
// thread keeps one thread even where more measured faster alone (intra_op_probe.h says why).
bool IsSmallOnFewCores(int threads, const BatchSizeMeasurement& m, int cores) {
  return threads == 1 && cores <= kFewCores && m.latency_ms < kSmallRunMs;
}

absl::StatusOr<double> MedianLatencyMs(const ModelConfig& config, BackendModel& model,
                                       const TimeSource& time, int64_t batch) {
  ASSIGN_OR_RETURN(const std::vector<Tensor> inputs, config.ExampleInputs(batch));
  // Untimed: the first run at a new shape pays for allocation and graph specialisation; a
  // second one settles caches, unless a run is slow enough that one timed run is telling.
  const TimePoint first = time.Now();
  RETURN_IF_ERROR(model.Execute(inputs).status());
  const bool slow = time.Now() - first > kTimePerSize / kMinRuns;
  if (!slow) RETURN_IF_ERROR(model.Execute(inputs).status());
  // Slow sizes (large batches of a large model) get 3 timed runs, not kMinRuns: tuning
  // ResNet-18 up to batch 32 on 2 cores would otherwise add many seconds to its load.
  const size_t min_runs = slow ? 3 : kMinRuns;
  std::vector<double> latencies;
  const TimePoint budget_end = time.Now() + kTimePerSize;
  while (latencies.size() < min_runs || (latencies.size() < kMaxRuns && time.Now() < budget_end)) {
    const TimePoint start = time.Now();
    RETURN_IF_ERROR(model.Execute(inputs).status());
    latencies.push_back(ToMilliseconds(time.Now() - start));
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
  const int cores = CoresAvailable();
  BatchTuning tuning;
  tuning.latency_slo_ms = config.dynamic_batching.latency_slo_ms;
  const double delay_ms = config.dynamic_batching.max_queue_delay_us / 1000.0;
  double best_within_slo = -1;
  double best = -1;
  double chosen_items_per_s = 0;
  for (int64_t batch : CandidateSizes(config)) {
    ASSIGN_OR_RETURN(double latency_ms, MedianLatencyMs(config, model, time, batch));
    BatchSizeMeasurement m;
    m.batch_size = batch;
    m.latency_ms = latency_ms;
    m.items_per_s = latency_ms > 0 ? batch * 1000.0 / latency_ms : 0;
    m.within_slo = 2 * latency_ms + delay_ms <= tuning.latency_slo_ms;
    tuning.table.push_back(m);
    if (m.within_slo && m.items_per_s > best_within_slo * kMinGain) {
      best_within_slo = m.items_per_s;
      tuning.chosen = batch;
      chosen_items_per_s = m.items_per_s;
    }
    const bool usable =
        m.within_slo || latency_ms <= kBacklogLatencyLimitInSlos * tuning.latency_slo_ms;
    const bool gained = usable && m.items_per_s > best * kMinGain;
    if (gained) {
      best = m.items_per_s;
      tuning.backlog_batch_size = batch;
    }
    // Latency grows with the batch: past the SLO, larger sizes only matter for backlog
    // mode, and only while they still add throughput.
    if (!m.within_slo && !gained) break;
  }
  if (tuning.backlog_batch_size < tuning.chosen) tuning.backlog_batch_size = tuning.chosen;
  const std::vector<int> threads = model.IntraOpThreadChoices();
  if (threads.size() > 1 && tuning.backlog_batch_size == tuning.chosen && best_within_slo > 0) {
    tuning.intra_op_threads = threads.front();
    for (size_t i = 1; i < threads.size(); ++i) {
      model.SetIntraOpThreads(threads[i]);
      ASSIGN_OR_RETURN(double latency_ms, MedianLatencyMs(config, model, time, tuning.chosen));
      BatchSizeMeasurement m;
      m.batch_size = tuning.chosen;
      m.latency_ms = latency_ms;
      m.items_per_s = latency_ms > 0 ? tuning.chosen * 1000.0 / latency_ms : 0;
      m.within_slo = 2 * latency_ms + delay_ms <= tuning.latency_slo_ms;
      tuning.thread_trials.emplace_back(threads[i], m);
      // Fewer threads win unless clearly slower: alone on the machine one thread often
      // matches two, and while serving the second core is busy with I/O and other models
      // (mlp_scorer: 152k vs 149k items/s alone at batch 32, 55k vs 41k req/s served).
      const bool fewer = threads[i] < tuning.intra_op_threads;
      const bool wins = fewer ? m.items_per_s * kMinGain >= chosen_items_per_s
                              : m.items_per_s > chosen_items_per_s * kMinGain;
      if (m.within_slo && (wins || IsSmallOnFewCores(threads[i], m, cores))) {
        chosen_items_per_s = m.items_per_s;
        tuning.intra_op_threads = threads[i];
      }
    }
    model.SetIntraOpThreads(tuning.intra_op_threads);
  }
  tuning.backlog_rows = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(chosen_items_per_s * tuning.latency_slo_ms / 1000.0)));
  return tuning;
}

BatchPolicy ApplyTuning(BatchPolicy policy, const BatchTuning& tuning) {
  policy.max_rows = tuning.chosen;
  policy.preferred_batch_sizes = {static_cast<int>(tuning.chosen)};
  if (tuning.backlog_batch_size > tuning.chosen) {
    policy.backlog_rows = tuning.backlog_rows;
    policy.backlog_max_rows = tuning.backlog_batch_size;
  }
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
    if (m.batch_size == tuning.backlog_batch_size && tuning.backlog_batch_size > tuning.chosen) {
      text += StrCat(" <- backlog (from ", tuning.backlog_rows, " queued rows)");
    }
  }
  for (const auto& [threads, m] : tuning.thread_trials) {
    char line[160];
    std::snprintf(line, sizeof(line),
                  "\nbatch %lld with %d intra-op thread(s): %.2f ms, %.0f items/s",
                  static_cast<long long>(m.batch_size), threads, m.latency_ms, m.items_per_s);
    text += line;
  }
  if (tuning.intra_op_threads > 0) {
    text += StrCat("\nintra-op threads kept: ", tuning.intra_op_threads);
    for (const auto& [threads, m] : tuning.thread_trials) {
      if (threads == tuning.intra_op_threads && IsSmallOnFewCores(threads, m, CoresAvailable())) {
        text += StrCat(" (small model on ", CoresAvailable(), " cores: batch ", m.batch_size,
                       " runs under ", kSmallRunMs,
                       " ms on one thread, so serving it is bound by the I/O threads, which "
                       "need the other cores)");
      }
    }
  }
  return text;
}

}  // namespace inferd
