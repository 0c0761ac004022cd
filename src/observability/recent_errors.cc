#include "observability/recent_errors.h"

#include <utility>

namespace inferd {

void RecentErrors::Add(RecentError error) {
  MutexLock lock(&mu_);
  errors_.push_front(std::move(error));
  while (errors_.size() > capacity_) errors_.pop_back();
}

std::vector<RecentError> RecentErrors::Snapshot() const {
  MutexLock lock(&mu_);
  return {errors_.begin(), errors_.end()};
}

}  // namespace inferd
