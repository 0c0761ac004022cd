// Condition waits with a deadline in an injected TimeSource's terms (common/clock.h): a batch
// delay, a request deadline or a housekeeping period ends when the time source passes it, so
// a test that advances a fake time by an hour sees an hour-long delay end at once, instead of
// waiting the same span of real time.
#ifndef INFERD_COMMON_TIMED_WAIT_H_
#define INFERD_COMMON_TIMED_WAIT_H_

#include "absl/base/thread_annotations.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace inferd {

// Waits on `cv`, with `mu` held, until `ready()` holds or `time` reaches `deadline`, and
// returns ready(). `ready` is only called by the condition variable, with `mu` held.
template <typename Predicate>
bool WaitUntil(const TimeSource& time, CondVar& cv, Mutex* mu, TimePoint deadline, Predicate ready)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  for (;;) {
    const TimePoint now = time.Now();
    // Past the deadline: one more look at ready(), without sleeping.
    if (now >= deadline) return cv.WaitUntil(mu, Clock::now(), ready);
    if (cv.WaitUntil(mu, Clock::now() + time.RealWaitBefore(now, deadline), ready)) return true;
  }
}

}  // namespace inferd

#endif  // INFERD_COMMON_TIMED_WAIT_H_
