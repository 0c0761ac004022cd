// A TimeSource that only moves when a test says so. For tests only: batch delays, deadlines
// and latency measurements become exact and need no sleeping, and a wait for a deadline
// (common/timed_wait.h) ends when the test advances past it.
//
// Thread-safety: thread-safe; code under test may read it from its own threads while the
// test advances it.
#ifndef INFERD_COMMON_FAKE_TIME_SOURCE_H_
#define INFERD_COMMON_FAKE_TIME_SOURCE_H_

#include <algorithm>
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
  Duration RealWaitBefore(TimePoint, TimePoint deadline) const override {
    MutexLock lock(&mu_);
    latest_wait_ = std::max(latest_wait_, deadline);
    waited_.NotifyAll();
    return std::chrono::milliseconds(1);
  }

  // For a test that must advance only once a thread is waiting: true when some thread waits
  // (through common/timed_wait.h) for `deadline` or later, false after `timeout` of real time.
  bool AwaitWaiterFor(TimePoint deadline, Duration timeout) const {
    MutexLock lock(&mu_);
    return waited_.WaitUntil(
        &mu_, Clock::now() + timeout,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return latest_wait_ >= deadline; });
  }

 private:
  mutable Mutex mu_;
  mutable CondVar waited_;
  TimePoint now_ ABSL_GUARDED_BY(mu_);
  mutable TimePoint latest_wait_ ABSL_GUARDED_BY(mu_){};
};

}  // namespace inferd

#endif  // INFERD_COMMON_FAKE_TIME_SOURCE_H_
