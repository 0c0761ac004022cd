// The decode loop's DecodeContext (decode_context.h) over a llama.cpp context: each call is
// the llama.cpp call the loop made before the interface existed.
//
// Thread-safety: the decode thread only. Ownership: borrows the context, the tokenizer and
// the adapters, which the engine owns and frees after this.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_DECODE_CONTEXT_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_DECODE_CONTEXT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/llama/decode_context.h"
#include "backends/llama/tokenizer.h"

struct llama_context;
struct llama_adapter_lora;

namespace inferd {

class LlamaDecodeContext : public DecodeContext {
 public:
  // `adapters`: the model's loaded adapters, in the order AdapterWeight::index counts them
  // (null for one that did not load: no request names it).
  LlamaDecodeContext(llama_context* context, const Tokenizer& tokenizer,
                     std::vector<llama_adapter_lora*> adapters);

  int64_t cells() const override;
  int32_t vocabulary_size() const override { return tokenizer_.vocabulary_size(); }
  int threads() const override;
  int batch_threads() const override;

  void SetThreads(int threads) override;
  absl::Status SetAdapters(const AdapterSet& set) override;
  int32_t Decode(const DecodeBatch& batch) override;
  bool RemoveCells(int32_t sequence, int32_t from) override;
  int32_t Sample(TokenSampler& sampler, int32_t row) override;
  std::span<const float> Logits(int32_t row) const override;
  bool IsEndOfGeneration(int32_t token) const override;
  std::string Piece(int32_t token) const override { return tokenizer_.Piece(token); }

 private:
  llama_context* const context_;
  const Tokenizer& tokenizer_;
  const std::vector<llama_adapter_lora*> adapters_;
  // llama_batch's per-row sequence lists (one sequence each): pointers into the batch's
  // sequence column, set each step; sized once.
  std::vector<int32_t> sequence_counts_;
  std::vector<int32_t*> sequence_lists_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_DECODE_CONTEXT_H_
