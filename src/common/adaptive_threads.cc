#include "common/adaptive_threads.h"

#include <algorithm>
#include <limits>

namespace inferd {

AdaptiveThreads::AdaptiveThreads(int most, bool adaptive, int64_t probe_every)
    : adaptive_(adaptive), probe_every_(std::max<int64_t>(probe_every, 2)) {
  most = std::max(most, 1);
  for (int threads = most; threads >= 1; threads /= 2) {
    candidates_.push_back(Candidate{threads});
    if (threads == 1) break;
  }
  for (Candidate& candidate : candidates_) candidate.interval = probe_every_;
}

double AdaptiveThreads::Median(const Candidate& candidate) const {
  static_assert(kWindow == 3, "the median below is of three");
  const std::array<double, kWindow>& r = candidate.recent;
  switch (std::min(candidate.samples, kWindow)) {
    case 0:
      return std::numeric_limits<double>::infinity();
    case 1:
      return r[0];
    case 2:
      return (r[0] + r[1]) / 2;
    default:
      return std::max(std::min(r[0], r[1]), std::min(std::max(r[0], r[1]), r[2]));
  }
}

AdaptiveThreads::Candidate* AdaptiveThreads::Find(int threads) {
  for (Candidate& candidate : candidates_) {
    if (candidate.threads == threads) return &candidate;
  }
  return nullptr;
}

int AdaptiveThreads::Best() const {
  const Candidate* best = &candidates_.front();
  for (const Candidate& candidate : candidates_) {
    if (Median(candidate) < Median(*best)) best = &candidate;
  }
  return best->threads;
}

int AdaptiveThreads::Next() {
  if (!adaptive_ || candidates_.size() == 1) return candidates_.front().threads;
  ++run_;
  const int best = Best();
  for (Candidate& candidate : candidates_) {
    // Never measured, or due: this run probes it, judged by this run's time alone.
    if (candidate.samples == 0 || (candidate.threads != best && run_ >= candidate.probe_at)) {
      candidate.samples = 0;
      probing_ = candidate.threads;
      return candidate.threads;
    }
  }
  return best;
}

void AdaptiveThreads::Record(int threads, double seconds, int units) {
  Candidate* candidate = Find(threads);
  if (candidate == nullptr || units <= 0 || !(seconds >= 0)) return;
  candidate->recent[static_cast<size_t>(candidate->samples % kWindow)] = seconds / units;
  ++candidate->samples;
  if (threads != probing_) return;
  probing_ = 0;
  if (Best() == threads) {
    // A probe that won: the machine changed, so every other count is worth a look soon.
    for (Candidate& other : candidates_) {
      other.interval = probe_every_;
      other.probe_at = run_ + probe_every_;
    }
  } else {
    // A probe that lost: asked again less often, down to one in kMaxBackoff x probe_every.
    candidate->interval = std::min(candidate->interval * 2, probe_every_ * kMaxBackoff);
    candidate->probe_at = run_ + candidate->interval;
  }
}

}  // namespace inferd
