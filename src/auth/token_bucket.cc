#include "auth/token_bucket.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace inferd {

TokenBucket::TokenBucket(double rate, double burst, TimePoint now)
    : rate_(rate), burst_(std::max(1.0, burst)), tokens_(burst_), last_(now) {}

void TokenBucket::Refill(TimePoint now) {
  // A clock that steps back (it never should: steady) must not mint tokens.
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
  last_ = now;
}

bool TokenBucket::TryTake(TimePoint now, Duration* wait) {
  Refill(now);
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return true;
  }
  const double seconds = (1.0 - tokens_) / rate_;
  *wait = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  return false;
}

}  // namespace inferd
