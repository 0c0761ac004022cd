#include "server/stop_signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace inferd {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

int StopSignals::WaitForStop() {
  int signal_number = 0;
  while (sigwait(&signals_, &signal_number) != 0) {
  }
  return signal_number;
}

std::chrono::milliseconds StopSignals::WaitOutDrain(std::chrono::milliseconds drain) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + drain;
  for (Clock::time_point now = start; now < deadline; now = Clock::now()) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
    timespec timeout{.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000),
                     .tv_nsec = static_cast<long>(left.count() % 1'000'000'000)};
    // EAGAIN: the drain is over; EINTR (another signal, e.g. a profiler's): wait on.
    if (sigtimedwait(&signals_, nullptr, &timeout) >= 0 || errno == EAGAIN) break;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace inferd
