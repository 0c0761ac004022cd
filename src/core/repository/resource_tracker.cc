#include "core/repository/resource_tracker.h"

#include <set>
#include <utility>

#include "common/strings.h"
#include "core/memory/eviction.h"
#include "core/memory/memory_budget.h"

namespace inferd {

ResourceTracker::ResourceTracker(std::map<std::string, uint64_t, std::less<>> budgets)
    : budgets_(std::move(budgets)) {}

uint64_t ResourceTracker::BudgetBytes(std::string_view device) const {
  auto it = budgets_.find(device);
  return it != budgets_.end() ? it->second : DefaultBudgetBytes(device);
}

uint64_t ResourceTracker::UsedBytes(std::string_view device,
                                    std::span<const VersionFootprint> versions) {
  uint64_t used = 0;
  std::set<std::string_view> counted;  // shared weights count once
  for (const VersionFootprint& v : versions) {
    if (v.device != device) continue;
    used += v.reserved_bytes;
    if (!v.ready) continue;
    if (!v.sha256.empty() && !counted.insert(v.sha256).second) continue;
    used += v.memory_bytes;
  }
  return used;
}

absl::StatusOr<std::vector<VersionKey>> ResourceTracker::ChooseEvictions(
    std::string_view device, uint64_t needed, const VersionKey& loading,
    std::span<const VersionFootprint> versions) const {
  // Holders of each digest on every device: a version whose weights another ready version
  // also holds frees nothing when evicted.
  std::map<std::string_view, int> holders;
  for (const VersionFootprint& v : versions) {
    if (v.ready && !v.sha256.empty()) ++holders[v.sha256];
  }
  std::vector<EvictionCandidate> candidates;
  for (const VersionFootprint& v : versions) {
    if (v.device != device || v.key.name == loading.name || !v.ready) continue;
    const bool shared = !v.sha256.empty() && holders[v.sha256] > 1;
    // A version that holds nothing (a pipeline: its step models hold the memory) frees
    // nothing when evicted, and would cost its next request a load.
    if (!shared && v.memory_bytes == 0) continue;
    candidates.push_back({v.key, shared ? 0 : v.memory_bytes, v.last_used, v.pinned, v.busy});
  }
  const uint64_t budget = BudgetBytes(device);
  const uint64_t used = UsedBytes(device, versions);
  absl::StatusOr<std::vector<VersionKey>> victims =
      inferd::ChooseEvictions(std::move(candidates), used, needed, budget);
  if (!victims.ok()) {
    return absl::UnavailableError(StrCat(
        loading.ToString(), " cannot be loaded within the ", device, " memory budget (",
        FormatBytes(used), " of ", FormatBytes(budget), " in use): ", victims.status().message()));
  }
  return victims;
}

}  // namespace inferd
