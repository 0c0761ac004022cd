// A TimeSource that only moves when a test says so. For tests only: batch delays, deadlines
// and latency measurements become exact and need no sleeping, and a wait for a deadline
// (common/timed_wait.h) ends when the test advances past it.
//
// Thread-safety: thread-safe; code under test may read it from its own threads while the
// test advances it.
#ifndef INFERD_COMMON_FAKE_TIME_SOURCE_H_
#define INFERD_COMMON_FAKE_TIME_SOURCE_H_

#include <chrono>

#include "absl/base/thread_annotations.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace inferd {

class FakeTimeSource : public TimeSource {
 public:
  // Starts well after the clock's epoch, so that `Now() - delay` is still a valid time.
  explicit FakeTimeSource(TimePoint start = TimePoint() + std::chrono::hours(24)) : now_(start) {}

  TimePoint Now() const override {
    MutexLock lock(&mu_);
    return now_;
  }

  void Advance(Duration by) {
    MutexLock lock(&mu_);
    now_ += by;
  }

  // This time moves only in Advance, which no sleeping thread hears of: a waiter reads it
  // again every millisecond, so a deadline an hour away passes as soon as a test advances an
  // hour.
  Duration RealWaitBefore(TimePoint, TimePoint) const override {
    return std::chrono::milliseconds(1);
  }

 private:
  mutable Mutex mu_;
  TimePoint now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_COMMON_FAKE_TIME_SOURCE_H_
