// A token bucket: `rate` tokens a second refill it, up to `burst`; each request takes one.
//
// Time comes from the caller (a TimeSource's Now()), so tests drive it without sleeping.
// Thread-safety: none; the owner (Tenant) guards it.
#ifndef INFERD_AUTH_TOKEN_BUCKET_H_
#define INFERD_AUTH_TOKEN_BUCKET_H_

#include "common/clock.h"

namespace inferd {

class TokenBucket {
 public:
  // `rate` > 0 tokens per second, `burst` >= 1. Starts full at `now`.
  TokenBucket(double rate, double burst, TimePoint now);

  // Takes one token when there is one. Otherwise returns false and sets `wait` to how long
  // until one is there.
  bool TryTake(TimePoint now, Duration* wait);

  double tokens() const { return tokens_; }

 private:
  void Refill(TimePoint now);

  const double rate_;
  const double burst_;
  double tokens_;
  TimePoint last_;
};

}  // namespace inferd

#endif  // INFERD_AUTH_TOKEN_BUCKET_H_
