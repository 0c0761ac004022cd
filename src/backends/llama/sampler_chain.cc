#include "backends/llama/sampler_chain.h"

#include <array>
#include <cmath>
#include <exception>
#include <limits>
#include <vector>

#include <llama.h>

#include "backends/llama/llama_log.h"
#include "common/strings.h"

namespace inferd {

void SamplerDeleter::operator()(llama_sampler* sampler) const { llama_sampler_free(sampler); }

SamplerPtr MakeSamplerChain(const SamplingParams& params, int32_t vocabulary) {
  SamplerPtr chain(llama_sampler_chain_init(llama_sampler_chain_default_params()));
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

int32_t GreedyToken(std::span<const float> logits) {
  // Eight running maxima (each the first of its lane's largest, by a strict >): independent
  // chains the CPU overlaps, where llama.cpp's loop waits on each comparison. Then the lanes'
  // best, the smaller index on a tie: the first index of the largest logit, as llama.cpp's
  // scan from index 0 finds it.
  constexpr size_t kLanes = 8;
  const size_t n = logits.size();
  if (n < kLanes) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i) {
      if (logits[i] > logits[best]) best = i;
    }
    return static_cast<int32_t>(best);
  }
  std::array<float, kLanes> value;
  std::array<size_t, kLanes> index;
  for (size_t k = 0; k < kLanes; ++k) {
    value[k] = logits[k];
    index[k] = k;
  }
  size_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t k = 0; k < kLanes; ++k) {
      if (logits[i + k] > value[k]) {
        value[k] = logits[i + k];
        index[k] = i + k;
      }
    }
  }
  for (; i < n; ++i) {
    if (logits[i] > value[0]) {
      value[0] = logits[i];
      index[0] = i;
    }
  }
  size_t best = 0;
  for (size_t k = 0; k < kLanes; ++k) {
    // A lane that began with a NaN kept it (nothing is > NaN): llama.cpp's scan keeps a NaN
    // only at index 0; the one-lane scan decides then.
    if (std::isnan(value[k])) {
      size_t first = 0;
      for (size_t j = 1; j < n; ++j) {
        if (logits[j] > logits[first]) first = j;
      }
      return static_cast<int32_t>(first);
    }
    if (value[k] > value[best] || (value[k] == value[best] && index[k] < index[best])) best = k;
  }
  return static_cast<int32_t>(index[best]);
}

void TokenSampler::Configure(const SamplingParams& params, int32_t vocabulary,
                             const llama_sampler* grammar) {
  chain_ = MakeSamplerChain(params, vocabulary);
  grammar_.reset(grammar != nullptr ? llama_sampler_clone(grammar) : nullptr);
  // As MakeSamplerChain builds it: greedy alone when nothing changes the logits first.
  plain_greedy_ = params.temperature <= 0 && params.logit_bias.empty() &&
                  params.presence_penalty == 0 && params.frequency_penalty == 0 &&
                  params.repetition_penalty == 1 && grammar_ == nullptr;
}

void TokenSampler::Clear() {
  chain_.reset();
  grammar_.reset();
  plain_greedy_ = false;
}

void TokenSampler::LoadLogits(llama_context* context, int32_t index) {
  const float* logits = llama_get_logits_ith(context, index);
  const int32_t vocabulary = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(context)));
  candidates_.resize(static_cast<size_t>(vocabulary));
  for (int32_t token = 0; token < vocabulary; ++token) {
    candidates_[static_cast<size_t>(token)] = llama_token_data{token, logits[token], 0.0f};
  }
}

int32_t TokenSampler::Sample(llama_context* context, int32_t index) {
  if (plain_greedy_) {
    const float* logits = llama_get_logits_ith(context, index);
    const int32_t vocabulary =
        llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(context)));
    const int32_t token = GreedyToken({logits, static_cast<size_t>(vocabulary)});
    llama_sampler_accept(chain_.get(), token);
    return token;
  }
  LoadLogits(context, index);
  llama_token_data_array all{candidates_.data(), candidates_.size(), -1, false};
  llama_sampler_apply(chain_.get(), &all);
  int32_t token = all.data[all.selected].id;
  if (grammar_ != nullptr) {
    llama_token_data single{token, 1.0f, 0.0f};
    llama_token_data_array one{&single, 1, -1, false};
    llama_sampler_apply(grammar_.get(), &one);
    if (single.logit == -std::numeric_limits<float>::infinity()) {
      // Refused: the grammar masks the whole vocabulary, and the chain picks again.
      LoadLogits(context, index);
      all = llama_token_data_array{candidates_.data(), candidates_.size(), -1, false};
      llama_sampler_apply(grammar_.get(), &all);
      llama_sampler_apply(chain_.get(), &all);
      token = all.data[all.selected].id;
    }
    llama_sampler_accept(grammar_.get(), token);
  }
  llama_sampler_accept(chain_.get(), token);
  return token;
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
