#include "core/scheduling/request_queue.h"

#include <algorithm>
#include <utility>

namespace inferd {

bool ShapesCompatible(const InferRequest& a, const InferRequest& b) {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Shape& x = a.inputs[i].tensor.shape();
    const Shape& y = b.inputs[i].tensor.shape();
    if (x.size() != y.size() || !std::equal(x.begin() + 1, x.end(), y.begin() + 1)) return false;
  }
  return true;
}

RequestQueue::RequestQueue(int priority_levels, size_t max_size)
    : levels_(static_cast<size_t>(std::max(1, priority_levels))), max_size_(max_size) {}

void RequestQueue::Push(PendingRequest pending) {
  const int last = static_cast<int>(levels_.size());
  const size_t level = static_cast<size_t>(std::clamp(pending.priority, 1, last) - 1);
  rows_ += pending.rows;
  levels_[level].push_back(std::move(pending));
  ++size_;
}

void RequestQueue::TakeExpired(TimePoint now, std::vector<PendingRequest>* expired) {
  for (auto& level : levels_) {
    for (auto it = level.begin(); it != level.end();) {
      if (it->deadline && *it->deadline <= now) {
        rows_ -= it->rows;
        expired->push_back(std::move(*it));
        it = level.erase(it);
        --size_;
      } else {
        ++it;
      }
    }
  }
}

std::optional<TimePoint> RequestQueue::EarliestDeadline() const {
  std::optional<TimePoint> earliest;
  for (const auto& level : levels_) {
    for (const PendingRequest& pending : level) {
      if (pending.deadline && (!earliest || *pending.deadline < *earliest)) {
        earliest = pending.deadline;
      }
    }
  }
  return earliest;
}

std::vector<PendingRequest> RequestQueue::Take(
    const std::vector<std::pair<size_t, size_t>>& positions) {
  std::vector<PendingRequest> taken;
  taken.reserve(positions.size());
  for (const auto& [level, index] : positions) {
    rows_ -= levels_[level][index].rows;
    taken.push_back(std::move(levels_[level][index]));
  }
  // Erase back to front so earlier indices stay valid.
  for (auto it = positions.rbegin(); it != positions.rend(); ++it) {
    auto& level = levels_[it->first];
    level.erase(level.begin() + static_cast<std::ptrdiff_t>(it->second));
  }
  size_ -= positions.size();
  return taken;
}

std::vector<PendingRequest> RequestQueue::TakeAll() {
  std::vector<PendingRequest> all;
  for (auto& level : levels_) {
    for (PendingRequest& pending : level) all.push_back(std::move(pending));
    level.clear();
  }
  size_ = 0;
  rows_ = 0;
  return all;
}

}  // namespace inferd
