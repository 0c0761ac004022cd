// Loads a GGUF file into llama.cpp: the model, its decoding context (KV cache sized for
// `parallel` sequences of `context_length` tokens) and, when asked, the embeddings context;
// and says how many bytes that KV cache takes, for the memory budget.
//
// Thread-safety: LoadModel may run on several threads at once (llama.cpp's process-wide
// set-up happens once). Ownership: on success the caller owns the model, the context and the
// embedder, and frees the embedder and the context before the model; on failure nothing is
// left to free.
#ifndef INFERD_BACKENDS_LLAMA_MODEL_LOADER_H_
#define INFERD_BACKENDS_LLAMA_MODEL_LOADER_H_

#include <cstdint>
#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "backends/llama/embedder.h"
#include "backends/llama/llama_options.h"

struct llama_model;
struct llama_context;

namespace inferd {

struct LoadedModel {
  llama_model* model = nullptr;
  llama_context* context = nullptr;
  std::unique_ptr<Embedder> embedder;  // null unless options.embeddings
};

// Errors name the file.
absl::StatusOr<LoadedModel> LoadModel(const std::filesystem::path& gguf,
                                      const LlamaOptions& options);

// Bytes of the KV caches of `context` and of `embedder` (null: none).
uint64_t KvCacheBytes(const llama_model* model, const llama_context* context,
                      const LlamaOptions& options, const Embedder* embedder);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_MODEL_LOADER_H_
