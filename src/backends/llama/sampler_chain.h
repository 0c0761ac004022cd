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
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"

struct llama_sampler;
struct llama_vocab;

namespace inferd {

struct SamplerDeleter {
  void operator()(llama_sampler* sampler) const;
};
using SamplerPtr = std::unique_ptr<llama_sampler, SamplerDeleter>;

// llama.cpp's sampler chain in the order its server applies these stages; greedy at
// temperature 0. `vocabulary`: the model's number of tokens. `grammar` (null: none): a
// compiled grammar, copied into the chain first so that every later stage sees only the
// tokens it allows; the chain keeps its own parse state.
SamplerPtr MakeSamplerChain(const SamplingParams& params, int32_t vocabulary,
                            const llama_sampler* grammar = nullptr);

// `gbnf` compiled for `vocab` (start rule "root"), to hand to MakeSamplerChain, shared by a
// request's choices; InvalidArgument naming `field` with llama.cpp's reasons when it does not
// parse. Costs time in proportion to the grammar: not for an I/O thread.
absl::StatusOr<std::shared_ptr<const llama_sampler>> CompileGrammar(const llama_vocab* vocab,
                                                                    const std::string& gbnf,
                                                                    std::string_view field);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_SAMPLER_CHAIN_H_
