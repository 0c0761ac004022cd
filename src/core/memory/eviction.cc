#include "core/memory/eviction.h"

#include <algorithm>

#include "common/strings.h"
#include "core/memory/memory_budget.h"

namespace inferd {

absl::StatusOr<std::vector<VersionKey>> ChooseEvictions(std::vector<EvictionCandidate> candidates,
                                                        uint64_t used, uint64_t needed,
                                                        uint64_t budget) {
  std::vector<VersionKey> chosen;
  if (needed > budget) {
    return absl::ResourceExhaustedError(StrCat("the model needs ", FormatBytes(needed),
                                               ", more than the whole budget of ",
                                               FormatBytes(budget)));
  }
  if (used + needed <= budget) return chosen;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const EvictionCandidate& a, const EvictionCandidate& b) {
                     return a.last_used < b.last_used;
                   });
  uint64_t remaining = used;
  uint64_t pinned = 0, busy = 0;
  for (const EvictionCandidate& candidate : candidates) {
    if (remaining + needed <= budget) break;
    if (candidate.pinned) {
      pinned += candidate.bytes;
      continue;
    }
    if (candidate.busy) {
      busy += candidate.bytes;
      continue;
    }
    chosen.push_back(candidate.key);
    remaining -= std::min(remaining, candidate.bytes);
  }
  if (remaining + needed > budget) {
    return absl::ResourceExhaustedError(
        StrCat("the model needs ", FormatBytes(needed), " but only ",
               FormatBytes(budget - std::min(budget, remaining)), " of the ", FormatBytes(budget),
               " budget can be freed (pinned models hold ", FormatBytes(pinned),
               ", models with requests in flight hold ", FormatBytes(busy),
               "); raise --memory-budget, unpin or unload a model, or retry"));
  }
  return chosen;
}

}  // namespace inferd
