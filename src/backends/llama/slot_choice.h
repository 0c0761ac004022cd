// Which free sequence slot a new request takes: the one whose KV cache already holds the
// longest prefix of its prompt (a shared system prompt, the earlier turns of a chat), so
// only the rest is processed; among equals the least recently used, so that the caches of
// recent conversations survive longest.
//
// Free of llama.cpp types: tokens are int32 ids.
#ifndef INFERD_BACKENDS_LLAMA_SLOT_CHOICE_H_
#define INFERD_BACKENDS_LLAMA_SLOT_CHOICE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace inferd {

size_t CommonPrefixLength(std::span<const int32_t> a, std::span<const int32_t> b);

struct SlotCandidate {
  std::span<const int32_t> cached;  // tokens the slot's KV cache holds
  uint64_t last_used = 0;           // larger: used more recently
};

// The index into `candidates` (non-empty) to use for `prompt`.
size_t ChooseSlot(std::span<const SlotCandidate> candidates, std::span<const int32_t> prompt);

// How many of `prompt`'s tokens to reuse from a cache holding `cached`: the common prefix,
// but never the whole prompt, since its last token must be decoded again to get logits.
size_t ReusablePrefix(std::span<const int32_t> cached, std::span<const int32_t> prompt);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_SLOT_CHOICE_H_
