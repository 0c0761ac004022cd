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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <llama.h>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"

namespace inferd {

struct SamplerDeleter {
  void operator()(llama_sampler* sampler) const;
};
using SamplerPtr = std::unique_ptr<llama_sampler, SamplerDeleter>;

// llama.cpp's sampler chain in the order its server applies these stages; greedy at
// temperature 0. `vocabulary`: the model's number of tokens. No grammar: TokenSampler holds
// that beside the chain.
SamplerPtr MakeSamplerChain(const SamplingParams& params, int32_t vocabulary);

// The token llama.cpp's greedy sampler picks from `logits` (the first index of the largest
// logit, a NaN never picked unless it is the first), read straight from the logits: no
// candidate array. `logits` is not empty.
int32_t GreedyToken(std::span<const float> logits);

// One sequence's sampling: the request's chain and, when its output is constrained, its own
// copy of the compiled grammar (which keeps the sequence's parse state).
//
// A grammar is checked against the token the chain picked, and applied to the whole
// vocabulary only when it refuses that token (then the chain picks again among the tokens the
// grammar allows), as llama.cpp's own server samples. Masking the whole vocabulary first on
// every step cost the demo model half its JSON-schema throughput
// (bench/llm/structured_bench.py); most steps' first pick is one the grammar allows. Greedy,
// the result is the token the grammar-first order gives (the best allowed token); when
// sampling at a temperature, a token the grammar allows is drawn from the unconstrained
// distribution unless the first draw is refused, as in llama.cpp's server.
//
// Plain greedy decoding (temperature 0; no bias, penalty or grammar) reads the token straight
// from the logits (GreedyToken): filling the candidate array (one 12-byte entry per token,
// 49k for SmolLM2) and scanning it with llama.cpp's one-lane loop cost the decode thread about
// as much as the rest of its work per token outside llama_decode
// (bench/llm/engine_gap.py).
//
// Thread-safety: used by one thread at a time. Keeps its candidate buffer (one entry per
// vocabulary token) across requests: Configure and Clear reuse it.
class TokenSampler {
 public:
  // Starts a sequence: `grammar` (null: none) is copied, its parse state fresh.
  void Configure(const SamplingParams& params, int32_t vocabulary, const llama_sampler* grammar);
  // Ends it; the candidate buffer stays allocated for the next.
  void Clear();

  // The next token from row `index` of `context`'s last logits, accepted into the chain's
  // and the grammar's state. Throws what llama.cpp's grammar throws when no token can
  // continue it.
  int32_t Sample(llama_context* context, int32_t index);

 private:
  void LoadLogits(llama_context* context, int32_t index);

  SamplerPtr chain_;
  SamplerPtr grammar_;         // null: unconstrained
  bool plain_greedy_ = false;  // the chain is llama.cpp's greedy sampler alone
  std::vector<llama_token_data> candidates_;
};

// `gbnf` compiled for `vocab` (start rule "root"), to hand to TokenSampler::Configure, shared by a
// request's choices; InvalidArgument naming `field` with llama.cpp's reasons when it does not
// parse. Costs time in proportion to the grammar: not for an I/O thread.
absl::StatusOr<std::shared_ptr<const llama_sampler>> CompileGrammar(const llama_vocab* vocab,
                                                                    const std::string& gbnf,
                                                                    std::string_view field);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_SAMPLER_CHAIN_H_
