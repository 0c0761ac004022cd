// Requests waiting for one model version to load: each with its deadline and the callback
// that answers it, answered together when the load ends, or one by one when their timeout
// passes.
//
// The answers are not run here: they are handed back as closures, which the model manager
// runs after releasing its lock (a callback may start a request, or take the lock again).
// Error statuses are made when an answer runs, one per waiter, so that no two threads share
// one Status's reference count.
//
// Thread-safety: thread-compatible; the manager keeps one per version under its lock.
#ifndef INFERD_CORE_REPOSITORY_LOAD_WAITERS_H_
#define INFERD_CORE_REPOSITORY_LOAD_WAITERS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/model/served_model.h"

namespace inferd {

class LoadWaiters {
 public:
  using Callback = std::function<void(absl::StatusOr<ModelHandle>)>;
  // Closures that deliver answers, run by the caller once it holds no lock.
  using Answers = std::vector<std::function<void()>>;

  // `deadline` is TimePoint::max() for a request without a timeout.
  void Add(TimePoint deadline, Callback done);
  bool empty() const { return waiters_.empty(); }
  size_t size() const { return waiters_.size(); }

  // Every waiter gets `handle`; none is left.
  void Serve(const ModelHandle& handle, Answers* answers);
  // Every waiter gets absl::Status(code, message); none is left.
  void Fail(absl::StatusCode code, const std::string& message, Answers* answers);
  // Waiters whose deadline is `now` or earlier get DeadlineExceeded with `message()` (made
  // only when one has expired); the others keep waiting.
  void Expire(TimePoint now, absl::FunctionRef<std::string()> message, Answers* answers);

 private:
  struct Waiter {
    TimePoint deadline;
    Callback done;
  };
  std::vector<Waiter> waiters_;
};

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_LOAD_WAITERS_H_
