// Time for code whose behaviour depends on it (batch delays, request deadlines), injected so
// that tests drive it explicitly instead of sleeping.
#ifndef INFERD_COMMON_CLOCK_H_
#define INFERD_COMMON_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace inferd {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Duration = Clock::duration;

// `d` in (fractional) milliseconds, for measurements people read.
inline double ToMilliseconds(Duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual TimePoint Now() const = 0;
  // How long, in real time, a thread waiting for `deadline` (in this source's terms) sleeps
  // before it reads Now() again, asked at `now` < `deadline`: the whole span for real time.
  // Wait through WaitUntil (common/timed_wait.h), never with a real-time deadline.
  virtual Duration RealWaitBefore(TimePoint now, TimePoint deadline) const {
    return deadline - now;
  }
};

class RealTimeSource : public TimeSource {
 public:
  TimePoint Now() const override { return Clock::now(); }
};

// The process-wide real time source.
const TimeSource* RealTime();

// Milliseconds since the Unix epoch, for timestamps people read (not for measuring).
int64_t WallClockMs();

}  // namespace inferd

#endif  // INFERD_COMMON_CLOCK_H_
