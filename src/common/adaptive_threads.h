// How many threads the next run of an engine uses, when the count is left to inferd: the
// count that has been fastest lately, among the cores this process may use, half of them, a
// quarter, ... down to one, re-measured now and then. Used for a language model's decode steps
// (`threads: 0`) and for a LibTorch model's runs when the load probe kept several intra-op
// threads (core/scheduling/intra_op_probe.h).
//
// Why: both engines run an operation as an OpenMP team that meets at a barrier after every
// operation (hundreds per token, dozens per image). Alone on the machine, every core is
// fastest; beside another busy process, a member descheduled by the kernel makes the others
// wait at each barrier: beside one busy single-threaded process the demo chat model made 15.6
// tokens/s on two fixed threads against 39.0 on one (bench/results/2026-12-05-shared-node.md).
// Which case holds changes while the server runs, so the count is chosen from measured run
// times rather than fixed at load.
//
// The rule: each candidate keeps its last three times per unit (run time / units in the run:
// tokens of a decode step, rows of a batch); the next run uses the candidate with the smallest
// median. Every other candidate is probed now and then: one run on it, judged by that run's
// time alone. A probe that loses doubles that candidate's interval (`probe_every` runs at
// first, at most kMaxBackoff times that), so a lasting state costs few slow runs; one that wins
// resets every interval. A busy neighbour arriving shows at once in the current count's own
// times; one leaving is noticed at the next probe (64 to 512 runs).
//
// Free of the engines and of the clock: the caller times its runs and says so (Record).
// Thread-safety: none; one thread at a time (the engine's loop, or the caller's lock).
#ifndef INFERD_COMMON_ADAPTIVE_THREADS_H_
#define INFERD_COMMON_ADAPTIVE_THREADS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferd {

class AdaptiveThreads {
 public:
  static constexpr int kWindow = 3;          // times kept per candidate
  static constexpr int64_t kMaxBackoff = 8;  // the longest probe interval, in probe_every

  // `most` (>= 1): the most threads a run may use. `adaptive` false: every run uses `most`
  // (a count the configuration fixed).
  AdaptiveThreads(int most, bool adaptive, int64_t probe_every = 64);

  // The thread count for the next run.
  int Next();
  // A run of `units` units (tokens, batch rows) on `threads` threads took `seconds`.
  void Record(int threads, double seconds, int units);

  // The count with the smallest median time per unit so far (`most` before any is known).
  int Best() const;

 private:
  struct Candidate {
    int threads = 1;
    std::array<double, kWindow> recent{};  // seconds per unit, a ring
    int samples = 0;
    int64_t interval = 0;  // runs between its probes
    int64_t probe_at = 0;  // the run of its next probe
  };

  double Median(const Candidate& candidate) const;
  Candidate* Find(int threads);

  std::vector<Candidate> candidates_;  // most, most / 2, ..., 1
  bool adaptive_;
  int64_t probe_every_;
  int64_t run_ = 0;
  int probing_ = 0;  // the count of the run being probed (0: none)
};

}  // namespace inferd

#endif  // INFERD_COMMON_ADAPTIVE_THREADS_H_
