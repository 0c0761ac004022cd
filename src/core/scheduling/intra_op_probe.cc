#include "core/scheduling/intra_op_probe.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// Timed runs per probe. The fastest counts, and the probe stops at the first run under
// kSmallRunMs (the question is answered) or once kProbeBudgetMs of runs are spent (a slow
// model shows it in one run; five runs each descheduled by a busy machine are unlikely).
constexpr int kMaxTimedRuns = 5;
constexpr double kProbeBudgetMs = 50;

absl::StatusOr<IntraOpRun> TimeFastestRun(const ModelConfig& config, BackendModel& model,
                                          const TimeSource& time, int threads, int64_t batch) {
  ASSIGN_OR_RETURN(const std::vector<Tensor> inputs, config.ExampleInputs(batch));
  // Untimed: the first run at a new shape or thread count allocates and specialises.
  RETURN_IF_ERROR(model.Execute(inputs).status());
  IntraOpRun run{.threads = threads, .batch_size = batch, .fastest_ms = 0, .runs = 0};
  double spent_ms = 0;
  while (run.runs < kMaxTimedRuns) {
    const TimePoint start = time.Now();
    RETURN_IF_ERROR(model.Execute(inputs).status());
    const double ms = ToMilliseconds(time.Now() - start);
    run.fastest_ms = run.runs == 0 ? ms : std::min(run.fastest_ms, ms);
    ++run.runs;
    spent_ms += ms;
    if (run.fastest_ms < kSmallRunMs || spent_ms >= kProbeBudgetMs) break;
  }
  return run;
}

std::string Ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g ms", ms);
  return text;
}

// The model keeps `threads` (> 1) to start with; its later runs choose among them.
IntraOpChoice Adapting(BackendModel& model, IntraOpChoice choice, int threads) {
  model.AdaptIntraOpThreads();
  StrAppend(&choice.reason, "; later runs choose among ", threads,
            " down to one from their own times (a busy neighbour slows a team)");
  return choice;
}

}  // namespace

absl::StatusOr<IntraOpChoice> ChooseIntraOpThreads(const ModelConfig& config, BackendModel& model,
                                                   const TimeSource& time, int cores) {
  IntraOpChoice choice;
  const std::vector<int> choices = model.IntraOpThreadChoices();
  const int current = choices.empty() ? model.intra_op_threads() : choices.front();
  choice.threads = current;
  if (choices.empty() || std::find(choices.begin(), choices.end(), 1) == choices.end()) {
    if (current == 1) {
      choice.reason = "one thread: nothing to choose (one core, or set so)";
    } else if (current > 1) {
      choice.reason =
          "fixed by config.yaml's parameters.intra_op_threads, --intra-op-threads or the backend";
    } else {
      choice.reason = "the engine does not say (a GPU, or an engine with a rule of its own)";
    }
    return choice;
  }
  if (cores > kFewCores) {
    choice.reason = StrCat("the backend's count: ", cores, " cores are more than ", kFewCores,
                           ", enough for the I/O threads beside it");
    return Adapting(model, choice, current);
  }
  ASSIGN_OR_RETURN(IntraOpRun alone, TimeFastestRun(config, model, time, current, 1));
  choice.probe.push_back(alone);
  std::string team_note;
  if (alone.fastest_ms >= kSmallRunMs) {
    // Slow on the team: a large model, or a small one whose team waits at every barrier for
    // a member a busy neighbour keeps off its core (then every run is slow, and the fastest
    // of several does not help). One thread tells them apart.
    model.SetIntraOpThreads(1);
    absl::StatusOr<IntraOpRun> single = TimeFastestRun(config, model, time, 1, 1);
    if (!single.ok()) {
      model.SetIntraOpThreads(current);
      return single.status();
    }
    choice.probe.push_back(*single);
    if (single->fastest_ms >= kSmallRunMs) {
      model.SetIntraOpThreads(current);
      choice.reason =
          StrCat("batch 1 takes ", Ms(alone.fastest_ms), " on ", current, " threads and ",
                 Ms(single->fastest_ms), " on one: not a small model, so it keeps them");
      return Adapting(model, choice, current);
    }
    team_note = StrCat("; batch 1 took ", Ms(alone.fastest_ms), " on ", current, " threads but ",
                       Ms(single->fastest_ms), " on one (a busy core slows the team)");
  }
  const int64_t largest = std::max(1, config.max_batch_size);
  model.SetIntraOpThreads(1);
  absl::StatusOr<IntraOpRun> one = TimeFastestRun(config, model, time, 1, largest);
  if (!one.ok()) {
    model.SetIntraOpThreads(current);
    return one.status();
  }
  choice.probe.push_back(*one);
  if (one->fastest_ms < kSmallRunMs) {
    choice.threads = 1;
    choice.reason = StrCat("batch ", largest, " takes ", Ms(one->fastest_ms),
                           " on one thread (under ", Ms(kSmallRunMs), ") on ", cores,
                           " cores: serving a model this small is bound by the I/O threads, "
                           "which need the other cores",
                           team_note);
    return choice;
  }
  model.SetIntraOpThreads(current);
  choice.reason = StrCat("batch ", largest, " takes ", Ms(one->fastest_ms),
                         " on one thread: large enough to use ", current, team_note);
  return Adapting(model, choice, current);
}

std::string DescribeIntraOpChoice(const IntraOpChoice& choice) {
  return StrCat(choice.threads, " (", choice.reason, ")");
}

}  // namespace inferd
