#include "backends/llama/decode_threads.h"

#include <algorithm>
#include <limits>

namespace inferd {

DecodeThreads::DecodeThreads(int most, bool adaptive, int64_t probe_every)
    : adaptive_(adaptive), probe_every_(std::max<int64_t>(probe_every, 2 * kProbeSteps)) {
  most = std::max(most, 1);
  for (int threads = most; threads >= 1; threads /= 2) {
    candidates_.push_back(Candidate{threads});
    if (threads == 1) break;
  }
  if (candidates_.back().threads != 1) candidates_.push_back(Candidate{1});
}

double DecodeThreads::Median(const Candidate& candidate) const {
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

DecodeThreads::Candidate* DecodeThreads::Find(int threads) {
  for (Candidate& candidate : candidates_) {
    if (candidate.threads == threads) return &candidate;
  }
  return nullptr;
}

int DecodeThreads::Best() const {
  const Candidate* best = &candidates_.front();
  for (const Candidate& candidate : candidates_) {
    if (Median(candidate) < Median(*best)) best = &candidate;
  }
  return best->threads;
}

int DecodeThreads::StartProbe(size_t index) {
  probing_ = static_cast<int>(index);
  probe_left_ = kProbeSteps - 1;
  candidates_[index].samples = 0;  // judged by this probe's times alone
  return candidates_[index].threads;
}

int DecodeThreads::Next() {
  if (!adaptive_ || candidates_.size() == 1) return candidates_.front().threads;
  ++step_;
  if (probe_left_ > 0) {
    --probe_left_;
    return candidates_[static_cast<size_t>(probing_)].threads;
  }
  // First every candidate gets its window, the largest first.
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (candidates_[i].samples == 0) return StartProbe(i);
  }
  const int best = Best();
  if (step_ % probe_every_ == 0) {
    // The candidate measured longest ago, other than the best.
    int oldest = -1;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      if (candidates_[i].threads == best) continue;
      if (oldest < 0 ||
          candidates_[i].measured_at < candidates_[static_cast<size_t>(oldest)].measured_at) {
        oldest = static_cast<int>(i);
      }
    }
    return StartProbe(static_cast<size_t>(oldest));
  }
  return best;
}

void DecodeThreads::Record(int threads, double seconds, int tokens) {
  Candidate* candidate = Find(threads);
  if (candidate == nullptr || tokens <= 0 || !(seconds >= 0)) return;
  candidate->recent[static_cast<size_t>(candidate->samples % kWindow)] = seconds / tokens;
  ++candidate->samples;
  candidate->measured_at = step_;
}

}  // namespace inferd
