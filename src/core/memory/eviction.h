// The choice of which loaded models to evict so that a load fits its device's budget:
// least recently used first, never a pinned model, never one with requests in flight.
// A pure function of its inputs, so the policy is tested without loading anything.
#ifndef INFERD_CORE_MEMORY_EVICTION_H_
#define INFERD_CORE_MEMORY_EVICTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/types/version_key.h"

namespace inferd {

struct EvictionCandidate {
  VersionKey key;
  uint64_t bytes = 0;   // what evicting it gives back to the budget
  TimePoint last_used;  // of its last request (or its load)
  bool pinned = false;  // `pin: true`
  bool busy = false;    // requests in flight or queued
};

// The versions to evict, least recently used first, so that `used - freed + needed <=
// budget`. Empty when the load already fits. ResourceExhausted, with what blocks it (pinned
// and busy bytes), when even evicting every idle unpinned model is not enough.
absl::StatusOr<std::vector<VersionKey>> ChooseEvictions(std::vector<EvictionCandidate> candidates,
                                                        uint64_t used, uint64_t needed,
                                                        uint64_t budget);

}  // namespace inferd

#endif  // INFERD_CORE_MEMORY_EVICTION_H_
