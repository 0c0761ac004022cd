// Busy polling: a thread that has just finished some work watches for the next piece for a
// short while before it goes to sleep.
//
// Handing a request to a sleeping thread costs a futex wake-up and a context switch, and the
// woken thread starts on cold caches. A request crosses two hand-offs (I/O thread -> model
// instance -> I/O thread); on this project's 2-core machine polling for 100 µs instead cut
// what inferd added to a 39 µs model at concurrency 1 from 122 to 32 µs
// (bench/results/2026-11-30-busy-poll.md). The price is CPU while the server is nearly
// idle, bounded by the budget after each piece of work; under load a thread finds work at
// once and never spins. `--busy-poll-us 0` turns it off for deployments that count every
// idle cycle.
//
// A fixed budget misses a client whose round trip is longer than it: over gRPC (Debian's
// 1.51) one client's next request reaches a model ~250 µs after its reply, so every request
// paid the wake-up (mlp_scorer's queue wait 46 µs against 6, and a forward pass on cold
// caches 14 µs longer: bench/results/2026-12-03-grpc-stretched-poll.md). PollBudget stretches
// the budget to the gaps it has seen, up to a ceiling.
#ifndef INFERD_COMMON_BUSY_POLL_H_
#define INFERD_COMMON_BUSY_POLL_H_

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace inferd {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Calls `ready()` until it returns true (then returns true) or `budget` has passed (false).
// Every few microseconds the thread offers its core to any other runnable thread, so that a
// spinning thread never delays the one that would produce its work on a busy machine.
template <typename Ready>
bool BusyPoll(std::chrono::steady_clock::duration budget, Ready ready) {
  if (budget <= std::chrono::steady_clock::duration::zero()) return ready();
  constexpr auto kYieldEvery = std::chrono::microseconds(10);
  auto now = std::chrono::steady_clock::now();
  const auto until = now + budget;
  auto next_yield = now + kYieldEvery;
  for (;;) {
    if (ready()) return true;
    CpuRelax();
    now = std::chrono::steady_clock::now();
    if (now >= until) return false;
    if (now >= next_yield) {
      sched_yield();
      next_yield = now + kYieldEvery;
    }
  }
}

// How long to poll after running out of work: the configured floor, or, while work keeps
// arriving within `ceiling` of running out, 1.5x the last such gap (the same client's next
// request, with room for jitter). A gap longer than the ceiling (no closed loop to catch)
// or a Reset brings the budget back to the floor. Not thread-safe: one per polling thread.
class PollBudget {
 public:
  using Duration = std::chrono::steady_clock::duration;

  PollBudget(Duration floor, Duration ceiling)
      : floor_(floor), ceiling_(std::max(floor, ceiling)), budget_(floor) {}

  Duration budget() const { return budget_; }

  // Back to the floor (the instance has more than one client's work about).
  void Reset() { budget_ = floor_; }

  // The time from running out of work to the next arrival.
  void Observe(Duration gap) {
    if (floor_ <= Duration::zero() || gap > ceiling_) {
      budget_ = floor_;
      return;
    }
    budget_ = std::clamp(gap + gap / 2, floor_, ceiling_);
  }

 private:
  const Duration floor_;
  const Duration ceiling_;
  Duration budget_;
};

}  // namespace inferd

#endif  // INFERD_COMMON_BUSY_POLL_H_
