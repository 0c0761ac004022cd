// The llama backend's per-model settings: config.yaml `parameters:` for backend llama.
//
// Free of llama.cpp types, so the rules are unit-tested without the engine.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_OPTIONS_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/config/model_config.h"

namespace inferd {

// config.yaml `parameters:` for backend llama (every one optional):
//   context_length: N   tokens one sequence may hold, prompt and output together (2048)
//   parallel: N         sequences decoded together in one step (4); the KV cache holds
//                       context_length x parallel tokens, counted in the memory budget
//   threads: N          threads of one decode step (0: automatic, common/adaptive_threads.h: up to
//                       the cores this process may use, fewer while other work holds them)
//   batch_threads: N    threads of prompt processing (0: as threads; with threads 0, the
//                       cores this process may use)
//   batch_size: N       tokens one engine call takes: the running sequences' next tokens
//                       first, then prompt chunks (512). Smaller bounds how long a long
//                       prompt delays the others' next token.
//   ubatch_size: N      the engine's physical batch (512; at most batch_size)
//   kv_cache_type: f16|f32|bf16|q8_0|q4_0|q4_1|q5_0|q5_1   (f16)
//   flash_attention: auto|on|off  (auto)
//   kv_unified: true|false  one KV buffer shared by all sequences (false: one per sequence)
//   max_tokens: N       the most tokens one request may generate (0: context_length)
//   max_queue: N        requests waiting for a free sequence; beyond it 429 (256)
//   embeddings: true|false  serve POST /v1/embeddings (false): a second llama.cpp context of
//                       ubatch_size tokens computes them, its KV cache counted in the budget;
//                       one input holds at most ubatch_size tokens (pooled in one batch)
//   pooling: auto|mean|cls|last  how token vectors become one (auto: the file's own
//                       `<arch>.pooling_type`, mean where it states none)
//   special_tokens_in_messages: true|false  tokenise chat messages' content with the
//                       vocabulary's special tokens parsed (false): true lets whoever writes a
//                       message write control tokens, and so forge system and assistant turns
//   gpu_layers: N       layers llama.cpp offloads to the GPU (n_gpu_layers), 0..1024 (0):
//                       any other value is refused at load by CheckGpuOffload, as the
//                       llama.cpp inferd links is the CPU build (docs/gpu.md)
struct LlamaOptions {
  int64_t context_length = 2048;
  int parallel = 4;
  int threads = 0;
  int batch_threads = 0;
  int batch_size = 512;
  int ubatch_size = 512;
  std::string kv_cache_type = "f16";
  std::string flash_attention = "auto";
  bool kv_unified = false;
  int64_t max_tokens = 0;
  int64_t max_queue = 256;
  bool embeddings = false;
  std::string pooling = "auto";
  bool special_tokens_in_messages = false;
  int gpu_layers = 0;

  int64_t max_output_tokens() const { return max_tokens > 0 ? max_tokens : context_length; }
};

// `config_path` names config.yaml in errors.
absl::StatusOr<LlamaOptions> ParseLlamaOptions(const ModelConfig& config,
                                               const std::string& config_path);

// OK when `options.gpu_layers` can be served: 0 always. `supports_gpu_offload` is
// llama_supports_gpu_offload() of the linked llama.cpp; without it a value > 0 is refused
// (FailedPrecondition), never silently run on the CPU. With it, still refused (Unimplemented)
// until the offloaded layers and their KV cache are counted in the cuda:N memory budget.
absl::Status CheckGpuOffload(const LlamaOptions& options, bool supports_gpu_offload,
                             const std::string& config_path);

// Bytes per KV cache element of `type` (f16: 2, q8_0: 34/32, ...); 0 for an unknown type.
double KvCacheElementBytes(const std::string& type);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_OPTIONS_H_
