#include "backends/llama/sampler_chain.h"

#include <exception>
#include <vector>

#include <llama.h>

#include "backends/llama/llama_log.h"
#include "common/strings.h"

namespace inferd {

void SamplerDeleter::operator()(llama_sampler* sampler) const { llama_sampler_free(sampler); }

SamplerPtr MakeSamplerChain(const SamplingParams& params, int32_t vocabulary,
                            const llama_sampler* grammar) {
  SamplerPtr chain(llama_sampler_chain_init(llama_sampler_chain_default_params()));
  if (grammar != nullptr) llama_sampler_chain_add(chain.get(), llama_sampler_clone(grammar));
  // Biases and penalties change the logits whatever picks the token, greedy included; they
  // cost nothing when unused (not in the chain).
  if (!params.logit_bias.empty()) {
    std::vector<llama_logit_bias> biases;
    biases.reserve(params.logit_bias.size());
    for (const TokenBias& bias : params.logit_bias) biases.push_back({bias.token, bias.bias});
    llama_sampler_chain_add(
        chain.get(), llama_sampler_init_logit_bias(vocabulary, static_cast<int32_t>(biases.size()),
                                                   biases.data()));
  }
  if (params.presence_penalty != 0 || params.frequency_penalty != 0 ||
      params.repetition_penalty != 1) {
    llama_sampler_chain_add(
        chain.get(), llama_sampler_init_penalties(vocabulary, params.penalty_last_n,
                                                  static_cast<float>(params.repetition_penalty),
                                                  static_cast<float>(params.frequency_penalty),
                                                  static_cast<float>(params.presence_penalty)));
  }
  if (params.temperature <= 0) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
    return chain;
  }
  if (params.top_k > 0)
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(params.top_k));
  if (params.top_p < 1.0) {
    llama_sampler_chain_add(chain.get(),
                            llama_sampler_init_top_p(static_cast<float>(params.top_p), 1));
  }
  if (params.min_p > 0) {
    llama_sampler_chain_add(chain.get(),
                            llama_sampler_init_min_p(static_cast<float>(params.min_p), 1));
  }
  llama_sampler_chain_add(chain.get(),
                          llama_sampler_init_temp(static_cast<float>(params.temperature)));
  llama_sampler_chain_add(chain.get(),
                          llama_sampler_init_dist(params.seed.value_or(LLAMA_DEFAULT_SEED)));
  return chain;
}

absl::StatusOr<std::shared_ptr<const llama_sampler>> CompileGrammar(const llama_vocab* vocab,
                                                                    const std::string& gbnf,
                                                                    std::string_view field) {
  LlamaErrorCapture capture;
  llama_sampler* grammar = nullptr;
  try {
    grammar = llama_sampler_init_grammar(vocab, gbnf.c_str(), "root");
  } catch (const std::exception& e) {
    capture.Add(e.what());
  }
  if (grammar == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("'", field, "': llama.cpp could not compile the grammar",
               capture.errors().empty() ? std::string() : StrCat(" (", capture.errors(), ")")));
  }
  return std::shared_ptr<const llama_sampler>(grammar, SamplerDeleter());
}

}  // namespace inferd
