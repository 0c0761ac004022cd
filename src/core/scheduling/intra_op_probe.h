// The intra-op thread count of a model whose config leaves it to inferd, chosen at load.
//
// On a machine with few cores, a small model serves faster on one intra-op thread than on
// all of them: its runs are so short that serving it is bound by the I/O threads' work per
// request (parse, queue, respond), and extra engine threads take those cores from them.
// Measured on 2 cores: mlp_scorer 55.2k req/s at 64 clients on one thread against 40.6k
// on two, though alone at batch 32 one thread took 0.21 ms against 0.14 ms
// (bench/results/2026-11-30-batching-mlp-session3.md). A large model (resnet18: ~200 ms at
// batch 8) keeps every core. So at load the model's largest batch is timed on one thread,
// and the model keeps one thread when that run is short.
//
// The auto-tuner (batch_tuner.h) makes the same comparison among its other measurements;
// this probe is for models that do not ask for auto-tuning, and costs a few short runs.
#ifndef INFERD_CORE_SCHEDULING_INTRA_OP_PROBE_H_
#define INFERD_CORE_SCHEDULING_INTRA_OP_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/backend/backend.h"
#include "core/config/model_config.h"

namespace inferd {

// A machine with at most this many cores counts as having few; a model whose largest batch
// runs in under kSmallRunMs on one thread is small.
inline constexpr int kFewCores = 4;
inline constexpr double kSmallRunMs = 1.0;

struct IntraOpRun {
  int threads = 0;
  int64_t batch_size = 0;
  double fastest_ms = 0;  // the fastest of the timed runs: a descheduled run only adds time
  int runs = 0;
};

// The count a model's runs use, and why: what the model statistics and the log show.
struct IntraOpChoice {
  int threads = 0;  // 0: the engine does not say (a GPU model, a language model)
  std::string reason;
  std::vector<IntraOpRun> probe;  // empty when nothing was timed
};

// Chooses for `model`, whose warm-up has run. When the backend offers no choice
// (IntraOpThreadChoices() empty: the config or --intra-op-threads fixed the count), keeps it.
// When the machine has more than kFewCores cores, keeps the backend's count. Otherwise times
// batch 1 on the current count; if that is slower than kSmallRunMs, batch 1 on one thread too
// (a model slow on both is not small, and the probe stops; one quick on a single thread was
// slowed by a busy core holding up the team). Then the largest batch on one thread: one
// thread is kept if that is under kSmallRunMs, else the count is restored. Whenever several
// threads are kept, the model is told to adapt its count at run time
// (BackendModel::AdaptIntraOpThreads). Errors are the model's own (Execute failed).
absl::StatusOr<IntraOpChoice> ChooseIntraOpThreads(const ModelConfig& config, BackendModel& model,
                                                   const TimeSource& time, int cores);

// "1 (batch 32 runs 0.21 ms on one thread: ...)", for the load log.
std::string DescribeIntraOpChoice(const IntraOpChoice& choice);

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_INTRA_OP_PROBE_H_
