// The model manager's memory accounting (TF Serving's ResourceTracker): each device's
// budget, the bytes its loaded and loading versions hold against it, and which idle,
// unpinned versions to evict, least recently used first, so that a load fits.
//
// It keeps no copy of the versions: the manager passes a view of them (VersionFootprint)
// to every call, so what is counted is always what the manager holds, and the policy is
// tested without loading anything.
//
// Thread-safety: immutable after construction; every method may be called concurrently.
#ifndef INFERD_CORE_REPOSITORY_RESOURCE_TRACKER_H_
#define INFERD_CORE_REPOSITORY_RESOURCE_TRACKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/types/version_key.h"

namespace inferd {

// One version as the memory budget sees it.
struct VersionFootprint {
  VersionKey key;
  std::string device;           // where its model runs ("cpu")
  bool ready = false;           // READY: its memory_bytes count
  uint64_t memory_bytes = 0;    // its weights (last load), counted while ready
  uint64_t reserved_bytes = 0;  // counted while it loads
  std::string sha256;           // of its model file; equal digests share weights, counted once
  TimePoint last_used{};        // of its last request (or its load)
  bool pinned = false;          // `pin: true`
  bool busy = false;            // a request holds it or runs on it
};

class ResourceTracker {
 public:
  // Explicit budgets by device; the others get DefaultBudgetBytes().
  explicit ResourceTracker(std::map<std::string, uint64_t, std::less<>> budgets);

  uint64_t BudgetBytes(std::string_view device) const;

  // What `versions` hold on `device`: every reservation, and the memory of ready versions,
  // once per weights digest.
  static uint64_t UsedBytes(std::string_view device, std::span<const VersionFootprint> versions);

  // The ready versions of `device` to evict, least recently used first, so that `needed`
  // more bytes fit for `loading`. A version of `loading`'s own model is never chosen (that
  // would turn an availability-preserving swap into a gap in service), and evicting one of
  // several holders of shared weights frees nothing. Unavailable, naming what blocks it,
  // when even evicting every idle unpinned version is not enough.
  absl::StatusOr<std::vector<VersionKey>> ChooseEvictions(
      std::string_view device, uint64_t needed, const VersionKey& loading,
      std::span<const VersionFootprint> versions) const;

 private:
  const std::map<std::string, uint64_t, std::less<>> budgets_;
};

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_RESOURCE_TRACKER_H_
