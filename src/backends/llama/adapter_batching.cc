#include "backends/llama/adapter_batching.h"

namespace inferd {

const AdapterSet& NextAdapterSet(std::span<const AdapterSet* const> ready, const AdapterSet& last) {
  // Two passes over at most `parallel` sequences: the smallest set after `last`, and the
  // smallest overall (the wrap-around).
  const AdapterSet* after = nullptr;
  const AdapterSet* first = nullptr;
  for (const AdapterSet* set : ready) {
    if (first == nullptr || *set < *first) first = set;
    if (*set > last && (after == nullptr || *set < *after)) after = set;
  }
  return after != nullptr ? *after : *first;
}

}  // namespace inferd
