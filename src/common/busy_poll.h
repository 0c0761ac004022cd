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
#ifndef INFERD_COMMON_BUSY_POLL_H_
#define INFERD_COMMON_BUSY_POLL_H_

#include <sched.h>

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

}  // namespace inferd

#endif  // INFERD_COMMON_BUSY_POLL_H_
