#include "backends/llama/llama_decode_context.h"

#include <utility>

#include <llama.h>

#include "backends/llama/sampler_chain.h"
#include "common/strings.h"

namespace inferd {

LlamaDecodeContext::LlamaDecodeContext(llama_context* context, const Tokenizer& tokenizer,
                                       std::vector<llama_adapter_lora*> adapters)
    : context_(context), tokenizer_(tokenizer), adapters_(std::move(adapters)) {}

int64_t LlamaDecodeContext::cells() const { return static_cast<int64_t>(llama_n_ctx(context_)); }
int LlamaDecodeContext::threads() const { return llama_n_threads(context_); }
int LlamaDecodeContext::batch_threads() const { return llama_n_threads_batch(context_); }

void LlamaDecodeContext::SetThreads(int threads) {
  llama_set_n_threads(context_, threads, threads);
}

absl::Status LlamaDecodeContext::SetAdapters(const AdapterSet& set) {
  std::vector<llama_adapter_lora*> pointers;
  std::vector<float> scales;
  for (const AdapterWeight& weight : set) {
    pointers.push_back(adapters_[static_cast<size_t>(weight.index)]);
    scales.push_back(weight.scale);
  }
  const int32_t rc =
      llama_set_adapters_lora(context_, pointers.data(), pointers.size(), scales.data());
  if (rc != 0) {
    return absl::InternalError(StrCat("llama.cpp could not set the adapters (code ", rc, ")"));
  }
  return absl::OkStatus();
}

int32_t LlamaDecodeContext::Decode(const DecodeBatch& batch) {
  const auto rows = static_cast<size_t>(batch.size());
  if (sequence_lists_.size() < rows) {
    sequence_counts_.assign(static_cast<size_t>(batch.capacity()), 1);
    sequence_lists_.resize(static_cast<size_t>(batch.capacity()));
  }
  // llama_batch is a view: the batch's own columns, read-only to llama_decode.
  for (size_t i = 0; i < rows; ++i) {
    sequence_lists_[i] = const_cast<int32_t*>(batch.sequences() + i);
  }
  llama_batch view{};
  view.n_tokens = batch.size();
  view.token = const_cast<llama_token*>(batch.tokens());
  view.pos = const_cast<llama_pos*>(batch.positions());
  view.n_seq_id = sequence_counts_.data();
  view.seq_id = sequence_lists_.data();
  view.logits = const_cast<int8_t*>(batch.logits());
  return llama_decode(context_, view);
}

bool LlamaDecodeContext::RemoveCells(int32_t sequence, int32_t from) {
  return llama_memory_seq_rm(llama_get_memory(context_), sequence, from, -1);
}

int32_t LlamaDecodeContext::Sample(TokenSampler& sampler, int32_t row) {
  return sampler.Sample(context_, row);
}

std::span<const float> LlamaDecodeContext::Logits(int32_t row) const {
  return {llama_get_logits_ith(context_, row), static_cast<size_t>(vocabulary_size())};
}

bool LlamaDecodeContext::IsEndOfGeneration(int32_t token) const {
  return llama_vocab_is_eog(tokenizer_.vocab(), token);
}

}  // namespace inferd
