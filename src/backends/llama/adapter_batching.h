// Which LoRA adapter set the next decode step serves.
//
// llama.cpp 0.3.36 applies adapters to a whole context (llama_set_adapters_lora), not to a
// sequence: every token of one llama_decode call goes through the same adapters. So a step
// holds only sequences whose adapter sets are equal (llama.cpp's server checks the same with
// are_lora_equal before it batches two slots), and when sequences with different sets are
// ready, successive steps take the sets in turn: each set, the base model's empty one
// included, gets one step in every round, whatever the number of sequences behind it, so no
// set starves another.
//
// Free of llama.cpp types: an adapter is its index in the model's adapter list.
#ifndef INFERD_BACKENDS_LLAMA_ADAPTER_BATCHING_H_
#define INFERD_BACKENDS_LLAMA_ADAPTER_BATCHING_H_

#include <compare>
#include <span>
#include <vector>

namespace inferd {

struct AdapterWeight {
  int index = 0;  // into the model's adapters
  float scale = 1.0f;

  auto operator<=>(const AdapterWeight&) const = default;
};

// What a sequence decodes with: sorted by index, no scale 0 (those change nothing), so that
// equal effects compare equal. Empty: the base model alone.
using AdapterSet = std::vector<AdapterWeight>;

// The set of the next step, among the sets of the sequences that have a token to decode
// (`ready`, non-empty, in any order, repeats allowed): the first in AdapterSet order after
// `last` (the previous step's), wrapping around to the first. With one set ready it is that
// one; with k sets, each is served once every k steps.
const AdapterSet& NextAdapterSet(std::span<const AdapterSet* const> ready, const AdapterSet& last);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_ADAPTER_BATCHING_H_
