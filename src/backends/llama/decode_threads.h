// How many threads the next decode step uses, when the model's `threads` is 0 (automatic):
// the count that has been fastest lately, among the cores this process may use, half of
// them, a quarter, ... down to one, re-measured now and then.
//
// Why: a decode step is an OpenMP team that meets at a barrier after every operation
// (hundreds per token). Alone on the machine, every core is fastest; beside another busy
// process, a member descheduled by the kernel makes the others wait at each barrier: beside
// one busy single-threaded process the demo chat model made 15.6 tokens/s on two fixed
// threads against 39.0 on one (bench/results/2026-12-05-shared-node.md). Which case holds changes
// while the server runs, so the count is chosen from measured step times rather than fixed at load.
//
// The rule: each candidate keeps its last three times per token (step time / tokens in the
// step); the next step uses the candidate with the smallest median. Every other candidate is
// probed now and then: one step on it, judged by that step's time alone. A probe that loses
// doubles that candidate's interval (`probe_every` steps at first, at most kMaxBackoff times
// that), so a lasting state costs few slow steps; one that wins resets every interval. A busy
// neighbour arriving shows at once in the current count's own times; one leaving is noticed
// at the next probe (64 to 512 steps: one to ten seconds at 50 tokens/s).
//
// Free of llama.cpp and of the clock: the engine times its steps and says so (Record).
// Thread-safety: one thread (the engine's loop).
#ifndef INFERD_BACKENDS_LLAMA_DECODE_THREADS_H_
#define INFERD_BACKENDS_LLAMA_DECODE_THREADS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferd {

class DecodeThreads {
 public:
  static constexpr int kWindow = 3;          // times kept per candidate
  static constexpr int64_t kMaxBackoff = 8;  // the longest probe interval, in probe_every

  // `most` (>= 1): the most threads a step may use. `adaptive` false: every step uses `most`
  // (a `threads` the configuration fixed).
  DecodeThreads(int most, bool adaptive, int64_t probe_every = 64);

  // The thread count for the next decode step.
  int Next();
  // A decode step of `tokens` tokens on `threads` threads took `seconds`.
  void Record(int threads, double seconds, int tokens);

  // The count with the smallest median time per token so far (`most` before any is known).
  int Best() const;

 private:
  struct Candidate {
    int threads = 1;
    std::array<double, kWindow> recent{};  // seconds per token, a ring
    int samples = 0;
    int64_t interval = 0;  // steps between its probes
    int64_t probe_at = 0;  // the step of its next probe
  };

  double Median(const Candidate& candidate) const;
  Candidate* Find(int threads);

  std::vector<Candidate> candidates_;  // most, most / 2, ..., 1
  bool adaptive_;
  int64_t probe_every_;
  int64_t step_ = 0;
  int probing_ = 0;  // the count of the step being probed (0: none)
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_DECODE_THREADS_H_
