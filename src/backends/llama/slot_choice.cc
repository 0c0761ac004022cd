#include "backends/llama/slot_choice.h"

#include <algorithm>

namespace inferd {

size_t CommonPrefixLength(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

size_t ChooseSlot(std::span<const SlotCandidate> candidates, std::span<const int32_t> prompt) {
  size_t best = 0;
  size_t best_prefix = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const size_t prefix = CommonPrefixLength(candidates[i].cached, prompt);
    const bool longer = prefix > best_prefix;
    const bool older =
        prefix == best_prefix && candidates[i].last_used < candidates[best].last_used;
    if (i == 0 || longer || older) {
      best = i;
      best_prefix = prefix;
    }
  }
  return best;
}

size_t ReusablePrefix(std::span<const int32_t> cached, std::span<const int32_t> prompt) {
  const size_t common = CommonPrefixLength(cached, prompt);
  return prompt.empty() ? 0 : std::min(common, prompt.size() - 1);
}

}  // namespace inferd
