#include "core/repository/load_waiters.h"

#include <optional>
#include <utility>

namespace inferd {

void LoadWaiters::Add(TimePoint deadline, Callback done) {
  waiters_.push_back(Waiter{deadline, std::move(done)});
}

void LoadWaiters::Serve(const ModelHandle& handle, Answers* answers) {
  for (Waiter& waiter : waiters_) {
    answers->push_back([done = std::move(waiter.done), handle] { done(handle); });
  }
  waiters_.clear();
}

void LoadWaiters::Fail(absl::StatusCode code, const std::string& message, Answers* answers) {
  for (Waiter& waiter : waiters_) {
    answers->push_back(
        [done = std::move(waiter.done), code, message] { done(absl::Status(code, message)); });
  }
  waiters_.clear();
}

void LoadWaiters::Expire(TimePoint now, absl::FunctionRef<std::string()> message,
                         Answers* answers) {
  std::optional<std::string> why;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->deadline > now) {
      ++it;
      continue;
    }
    if (!why) why = message();
    answers->push_back(
        [done = std::move(it->done), why = *why] { done(absl::DeadlineExceededError(why)); });
    it = waiters_.erase(it);
  }
}

}  // namespace inferd
