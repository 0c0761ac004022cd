// What the llama engine's decode loop asks of llama.cpp, as an interface: decode a batch of
// (token, position, sequence, wants logits) rows, cut a sequence's KV cells, pick a row's next
// token with its sampler, tell an end-of-generation token, give a token's text, set the thread
// count and the adapters. LlamaDecodeContext (llama_decode_context.h) is the real one, over a
// llama_context; llama_engine_test.cc scripts one, so admission, chunked prompts,
// cancellation, deadlines, queue limits and n > 1 are tested without a GGUF file.
//
// The loop makes one call per step (Decode) and a few per sampled row (Sample,
// IsEndOfGeneration, Piece): a virtual call each, beside a forward pass of the model.
//
// Thread-safety: used by the decode thread only. Ownership: the engine owns it.
#ifndef INFERD_BACKENDS_LLAMA_DECODE_CONTEXT_H_
#define INFERD_BACKENDS_LLAMA_DECODE_CONTEXT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/llama/adapter_batching.h"

namespace inferd {

class TokenSampler;

// One step's rows, in the order the model sees them. Its arrays are allocated once, for the
// step size the engine was configured with (parameters.batch_size).
class DecodeBatch {
 public:
  explicit DecodeBatch(int32_t capacity)
      : tokens_(static_cast<size_t>(capacity)),
        positions_(static_cast<size_t>(capacity)),
        sequences_(static_cast<size_t>(capacity)),
        logits_(static_cast<size_t>(capacity)) {}

  // Appends a row and returns its index; the caller keeps size() below capacity().
  int32_t Add(int32_t token, int32_t position, int32_t sequence, bool logits) {
    const auto i = static_cast<size_t>(size_);
    tokens_[i] = token;
    positions_[i] = position;
    sequences_[i] = sequence;
    logits_[i] = logits ? 1 : 0;
    return size_++;
  }
  void Clear() { size_ = 0; }

  int32_t size() const { return size_; }
  int32_t capacity() const { return static_cast<int32_t>(tokens_.size()); }
  bool empty() const { return size_ == 0; }
  // The rows' columns (the first size() entries count), laid out as llama_batch wants them.
  const int32_t* tokens() const { return tokens_.data(); }
  const int32_t* positions() const { return positions_.data(); }
  const int32_t* sequences() const { return sequences_.data(); }
  const int8_t* logits() const { return logits_.data(); }

 private:
  std::vector<int32_t> tokens_, positions_, sequences_;
  std::vector<int8_t> logits_;
  int32_t size_ = 0;
};

class DecodeContext {
 public:
  virtual ~DecodeContext() = default;

  // KV cells the context holds, all sequences together (llama.cpp's n_ctx).
  virtual int64_t cells() const = 0;
  // Tokens in the vocabulary (a sampler's candidates, a logits row's length).
  virtual int32_t vocabulary_size() const = 0;
  // The thread counts the context was created with: for one-token steps and for prompt
  // steps (llama.cpp's n_threads and n_threads_batch).
  virtual int threads() const = 0;
  virtual int batch_threads() const = 0;

  // The thread count of the next decodes, one-token and prompt steps alike.
  virtual void SetThreads(int threads) = 0;
  // Makes `set` (indices into the model's loaded adapters, with their scales) the adapters
  // the next decodes run with.
  virtual absl::Status SetAdapters(const AdapterSet& set) = 0;
  // Runs `batch` through the model: 0, or llama_decode's error code.
  virtual int32_t Decode(const DecodeBatch& batch) = 0;
  // Removes sequence `sequence`'s cells at positions `from` and after (negative: all of
  // them); false when the cache cannot cut it there (then only removing all of them works).
  virtual bool RemoveCells(int32_t sequence, int32_t from) = 0;
  // The next token of row `row` of the last Decode, picked by `sampler` (which keeps the
  // sequence's sampling state). Throws what TokenSampler::Sample throws.
  virtual int32_t Sample(TokenSampler& sampler, int32_t row) = 0;
  // The logits of row `row` of the last Decode, one per vocabulary token.
  virtual std::span<const float> Logits(int32_t row) const = 0;
  virtual bool IsEndOfGeneration(int32_t token) const = 0;
  // The text of `token` (a special token's own text not included).
  virtual std::string Piece(int32_t token) const = 0;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_DECODE_CONTEXT_H_
