#include "core/scheduling/batch_planner.h"

namespace inferd {
namespace {

struct Candidate {
  std::pair<size_t, size_t> position;
  int64_t rows;
};

// The longest prefix of `candidates` whose rows add up to exactly `target`, or 0.
size_t PrefixWithRows(const std::vector<Candidate>& candidates, int64_t target) {
  int64_t rows = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    rows += candidates[i].rows;
    if (rows == target) return i + 1;
    if (rows > target) return 0;
  }
  return 0;
}

BatchPlan Run(const std::vector<Candidate>& candidates, size_t count) {
  BatchPlan plan;
  for (size_t i = 0; i < count; ++i) plan.positions.push_back(candidates[i].position);
  return plan;
}

// The largest preferred size an exact prefix reaches, as a prefix length; 0 if none.
size_t LargestPreferredPrefix(const std::vector<Candidate>& candidates,
                              const std::vector<int>& preferred) {
  for (auto it = preferred.rbegin(); it != preferred.rend(); ++it) {
    if (size_t n = PrefixWithRows(candidates, *it)) return n;
  }
  return 0;
}

}  // namespace

BatchPlan PlanBatch(const RequestQueue& queue, const BatchPolicy& policy, TimePoint now) {
  if (queue.empty()) return {};
  const bool backlog = policy.dynamic && policy.backlog_rows > 0 &&
                       queue.rows() >= policy.backlog_rows &&
                       policy.backlog_max_rows > policy.max_rows;
  const int64_t max_rows = backlog ? policy.backlog_max_rows : policy.max_rows;
  const PendingRequest* head = nullptr;
  std::vector<Candidate> candidates;
  int64_t rows = 0;
  queue.ForEachInOrder([&](size_t level, size_t index, const PendingRequest& pending) {
    if (head == nullptr) {
      head = &pending;
    } else if (!policy.dynamic || rows + pending.rows > max_rows ||
               !ShapesCompatible(*head->request, *pending.request)) {
      return policy.dynamic;  // skipped; later (smaller, compatible) requests may still fit
    }
    candidates.push_back({{level, index}, pending.rows});
    rows += pending.rows;
    return rows < max_rows;
  });

  // Without batching, or a request as large as a batch: it runs alone, now.
  if (!policy.dynamic || rows >= max_rows || backlog) return Run(candidates, candidates.size());

  const std::vector<int>& preferred = policy.preferred_batch_sizes;
  if (!preferred.empty() && rows >= preferred.back()) {
    if (size_t n = PrefixWithRows(candidates, preferred.back())) return Run(candidates, n);
  }
  const TimePoint flush_at = head->enqueued + policy.max_queue_delay;
  if (now >= flush_at) {
    const size_t n = preferred.empty() ? 0 : LargestPreferredPrefix(candidates, preferred);
    return Run(candidates, n > 0 ? n : candidates.size());
  }
  BatchPlan wait;
  wait.decide_again_at = flush_at;
  return wait;
}

}  // namespace inferd
