// Batch sizes that tune themselves: at load, measure the model's latency and throughput at
// each candidate batch size on its own device, and choose the size with the highest
// throughput whose worst-case queueing latency still meets the SLO.
//
// Under overload the SLO is lost whatever the batch size, and the queueing delay, which then
// dominates latency, shrinks with throughput. So the tuner keeps measuring past the SLO
// while throughput still grows, and the scheduler switches to the throughput-best size once
// the queue holds more than the SLO size can finish within the SLO (backlog mode,
// batch_planner.h).
//
// Why: measured on a 2-core CPU, batching gains 7-16x items/s on a tiny MLP but only
// 1.0-1.4x on ResNet-18, and batch 32 can be slower per item than batch 4. One fixed
// max_batch_size is wrong for some model; this finds the size per model, per machine.
#ifndef INFERD_CORE_SCHEDULING_BATCH_TUNER_H_
#define INFERD_CORE_SCHEDULING_BATCH_TUNER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/backend/backend.h"
#include "core/config/model_config.h"
#include "core/scheduling/batch_planner.h"

namespace inferd {

struct BatchSizeMeasurement {
  int64_t batch_size = 0;
  double latency_ms = 0;   // median of the timed runs
  double items_per_s = 0;  // batch_size / latency
  // A request can wait for one running batch, then run in its own, after the queue delay:
  // 2 x latency + max_queue_delay must fit in the SLO.
  bool within_slo = false;
};

struct BatchTuning {
  std::vector<BatchSizeMeasurement> table;
  int64_t chosen = 1;
  double latency_slo_ms = 0;
  // The size with the best throughput measured (>= chosen), for backlog mode.
  int64_t backlog_batch_size = 1;
  // Queued rows from which a new request misses the SLO at the chosen size: what the chosen
  // size processes in one SLO.
  int64_t backlog_rows = 0;
  // When the backend offered a choice (BackendModel::IntraOpThreadChoices): the chosen size
  // timed with each other thread count, and the count kept. 0: not compared.
  std::vector<std::pair<int, BatchSizeMeasurement>> thread_trials;
  int intra_op_threads = 0;
};

// The batching the config asks for, before any tuning.
BatchPolicy PolicyFromConfig(const ModelConfig& config);

// Measures the candidate sizes (1, 2, 4, ... up to max_batch_size, and the preferred sizes)
// on zero inputs and chooses one. Past the SLO it stops at the first size that does not
// raise throughput by 3 %, or takes over 10 x the SLO. Never exceeds max_batch_size.
// When the model offers intra-op thread counts and the chosen size is also the
// throughput-best one (no backlog size), the chosen size is timed with the other counts too
// and the model keeps the count with the best throughput within the SLO, fewer threads
// winning unless 3 % slower (they leave cores to the I/O threads and other models); models
// with a backlog size keep their count, so that large models do not pay for more slow runs
// at load.
absl::StatusOr<BatchTuning> TuneBatchSize(const ModelConfig& config, BackendModel& model,
                                          const TimeSource& time);

// The config's policy with the tuned size as the batch limit and the preferred size, and
// backlog mode when a larger size has more throughput.
BatchPolicy ApplyTuning(BatchPolicy policy, const BatchTuning& tuning);

// One line per size, for the log: "batch 8: 41.2 ms, 194 items/s, within SLO <- chosen".
std::string DescribeTuning(const BatchTuning& tuning);

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_BATCH_TUNER_H_
