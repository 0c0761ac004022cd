// A TimeSource that only moves when a test says so. For tests only: batch delays, deadlines
// and latency measurements become exact and need no sleeping.
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

 private:
  mutable Mutex mu_;
  TimePoint now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_COMMON_FAKE_TIME_SOURCE_H_
