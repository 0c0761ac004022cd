// OpenAI's logprobs from one decode step's logits: the sampled token's log-probability under
// the model and the likeliest alternatives. The log-softmax of the raw logits, before
// temperature, penalties, grammar or any other sampler (what the model thinks, not what the
// sampler allowed), computed in double for the normaliser.
//
// Free of llama.cpp types, so it is unit-tested; the engine calls it only for requests that
// ask for logprobs (one pass over the vocabulary, plus a partial sort for the alternatives).
#ifndef INFERD_BACKENDS_LLAMA_TOKEN_LOGPROBS_H_
#define INFERD_BACKENDS_LLAMA_TOKEN_LOGPROBS_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace inferd {

struct StepLogprobs {
  float logprob = 0;                           // of the sampled token
  std::vector<std::pair<int32_t, float>> top;  // (token, logprob), likeliest first
};

// `logits` has one entry per vocabulary token; `token` is the sampled one (in range);
// `top` alternatives (0 .. vocabulary size), ties broken by the lower token id.
StepLogprobs LogprobsOf(std::span<const float> logits, int32_t token, int top);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_TOKEN_LOGPROBS_H_
