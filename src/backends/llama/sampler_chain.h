// The sampler chain that picks a sequence's next token from the logits, built from the
// request's SamplingParams with llama.cpp's samplers.
//
// Thread-safety: MakeSamplerChain may run on any thread; a chain is used by one thread at a
// time (it holds the sequence's random state and penalty history). Ownership: the caller owns
// the chain through the returned pointer.
#ifndef INFERD_BACKENDS_LLAMA_SAMPLER_CHAIN_H_
#define INFERD_BACKENDS_LLAMA_SAMPLER_CHAIN_H_

#include <cstdint>
#include <memory>

#include "core/generation.h"

struct llama_sampler;

namespace inferd {

struct SamplerDeleter {
  void operator()(llama_sampler* sampler) const;
};
using SamplerPtr = std::unique_ptr<llama_sampler, SamplerDeleter>;

// llama.cpp's sampler chain in the order its server applies these stages; greedy at
// temperature 0. `vocabulary`: the model's number of tokens.
SamplerPtr MakeSamplerChain(const SamplingParams& params, int32_t vocabulary);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_SAMPLER_CHAIN_H_
