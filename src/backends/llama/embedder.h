// Embeddings of one GGUF model: a llama.cpp context of its own with embeddings on and the
// chosen pooling, beside the model's generation context (the weights are shared; the KV cache
// and compute buffers are its own, so embedding never disturbs a generating sequence's cache).
//
// One input per engine call, all its tokens in one physical batch: llama.cpp pools a
// sequence within one ubatch, so an input holds at most `max_tokens()` (ubatch_size) tokens,
// as in llama.cpp's own server. Every token is marked as an output, as pooled embeddings
// require. Vectors are L2-normalised (as OpenAI's and llama.cpp's server's are).
//
// Thread-safety: none; the model's decode thread owns it (Embed runs between decode steps).
#ifndef INFERD_BACKENDS_LLAMA_EMBEDDER_H_
#define INFERD_BACKENDS_LLAMA_EMBEDDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/llama/llama_options.h"

struct llama_model;
struct llama_context;

namespace inferd {

class Embedder {
 public:
  // `pooling`: a llama_pooling_type other than NONE or UNSPECIFIED (the engine resolves
  // the config's `pooling` against the file). RANK makes it a reranker's: Embed gives the
  // classifier's outputs, not normalised (a pair's score is the first). `file` names the model in
  // errors.
  static absl::StatusOr<std::unique_ptr<Embedder>> Create(llama_model* model,
                                                          const LlamaOptions& options, int pooling,
                                                          const std::string& file);
  ~Embedder();
  Embedder(const Embedder&) = delete;
  Embedder& operator=(const Embedder&) = delete;

  // The normalised embedding of `tokens` (1..max_tokens() of them).
  absl::StatusOr<std::vector<float>> Embed(const std::vector<int32_t>& tokens);

  int64_t max_tokens() const { return max_tokens_; }
  int64_t dimensions() const { return dimensions_; }
  bool ranks() const { return rank_; }
  // Tokens the context's KV cache holds (for the memory budget).
  int64_t context_tokens() const;

 private:
  Embedder(llama_context* context, int64_t max_tokens, int64_t dimensions, bool rank);

  llama_context* const context_;
  const int64_t max_tokens_;
  const int64_t dimensions_;
  const bool rank_;
};

// The name of a llama_pooling_type for messages ("mean", "cls", ...).
std::string PoolingName(int pooling);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_EMBEDDER_H_
