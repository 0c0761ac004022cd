// An annotated mutex and condition variable over the standard library's.
//
// Why not absl::Mutex: Debian's Abseil is not built for ThreadSanitizer, which then reports
// false races on every absl::Mutex. std::mutex is understood by TSan, and these wrappers keep
// the thread-safety annotations (ABSL_GUARDED_BY and friends) that clang checks.
#ifndef INFERD_COMMON_MUTEX_H_
#define INFERD_COMMON_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace inferd {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Waits always take the predicate, so a spurious wake-up can never be mistaken for an event.
class CondVar {
 public:
  template <typename Predicate>
  void Wait(Mutex* mu, Predicate ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock, ready);
    lock.release();
  }

  // Returns ready() after waking at `deadline` at the latest.
  template <typename Predicate>
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline, Predicate ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool result = cv_.wait_until(lock, deadline, ready);
    lock.release();
    return result;
  }

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace inferd

#endif  // INFERD_COMMON_MUTEX_H_
