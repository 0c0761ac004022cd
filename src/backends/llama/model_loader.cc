#include "backends/llama/model_loader.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include <llama.h>

#include "backends/llama/llama_log.h"
#include "common/cores.h"
#include "common/strings.h"

namespace inferd {
namespace {

ggml_type KvType(const std::string& name) {
  if (name == "f32") return GGML_TYPE_F32;
  if (name == "bf16") return GGML_TYPE_BF16;
  if (name == "q8_0") return GGML_TYPE_Q8_0;
  if (name == "q4_0") return GGML_TYPE_Q4_0;
  if (name == "q4_1") return GGML_TYPE_Q4_1;
  if (name == "q5_0") return GGML_TYPE_Q5_0;
  if (name == "q5_1") return GGML_TYPE_Q5_1;
  return GGML_TYPE_F16;
}

llama_flash_attn_type FlashAttention(const std::string& name) {
  if (name == "on") return LLAMA_FLASH_ATTN_TYPE_ENABLED;
  if (name == "off") return LLAMA_FLASH_ATTN_TYPE_DISABLED;
  return LLAMA_FLASH_ATTN_TYPE_AUTO;
}

std::optional<int64_t> MetaInt(const llama_model* model, const std::string& key) {
  char buffer[64];
  if (llama_model_meta_val_str(model, key.c_str(), buffer, sizeof(buffer)) <= 0) {
    return std::nullopt;
  }
  return std::strtoll(buffer, nullptr, 10);
}

// K and V elements one token occupies per layer. Head sizes come from the file's metadata
// when it has them (models whose head size is not n_embd / n_head), else from n_embd.
int64_t KvElementsPerTokenLayer(const llama_model* model) {
  char arch[64] = {0};
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof(arch));
  const int64_t n_head = std::max(1, llama_model_n_head(model));
  const int64_t n_head_kv = std::max(1, llama_model_n_head_kv(model));
  const int64_t fallback = llama_model_n_embd(model) / n_head;
  const int64_t key = MetaInt(model, StrCat(arch, ".attention.key_length")).value_or(fallback);
  const int64_t value = MetaInt(model, StrCat(arch, ".attention.value_length")).value_or(fallback);
  return (key + value) * n_head_kv;
}

// The pooling of `options.pooling` for this file: auto takes the file's `<arch>.pooling_type`
// (a generative model states none: mean).
absl::StatusOr<int> ResolvePooling(const llama_model* model, const std::string& pooling,
                                   const std::string& file) {
  if (pooling == "mean") return LLAMA_POOLING_TYPE_MEAN;
  if (pooling == "cls") return LLAMA_POOLING_TYPE_CLS;
  if (pooling == "last") return LLAMA_POOLING_TYPE_LAST;
  if (pooling == "rank") {
    // A reranker: its classification head scores a pair; a file without one has nothing to
    // score with.
    if (llama_model_n_cls_out(model) == 0) {
      return absl::InvalidArgumentError(
          StrCat(file, ": parameters.pooling is rank, but the file has no classifier outputs"));
    }
    return LLAMA_POOLING_TYPE_RANK;
  }
  char arch[64] = {0};
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof(arch));
  const int64_t stated = MetaInt(model, StrCat(arch, ".pooling_type")).value_or(0);
  if (stated == LLAMA_POOLING_TYPE_NONE) return LLAMA_POOLING_TYPE_MEAN;
  if (stated == LLAMA_POOLING_TYPE_MEAN || stated == LLAMA_POOLING_TYPE_CLS ||
      stated == LLAMA_POOLING_TYPE_LAST) {
    return static_cast<int>(stated);
  }
  return absl::InvalidArgumentError(
      StrCat(file, ": the file's pooling type is ", PoolingName(static_cast<int>(stated)),
             " (a reranker scores pairs, it does not embed); set parameters.pooling to rank to "
             "serve it at /v1/rerank, or to mean, cls or last to embed with it anyway"));
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModel(const std::filesystem::path& gguf,
                                      const LlamaOptions& options) {
  InitLlamaOnce();
  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(gguf.c_str(), model_params);
  if (model == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(gguf.string(),
               ": llama.cpp could not load this file as a GGUF model (its "
               "reason is in the log above)"));
  }
  const int threads = options.threads > 0 ? options.threads : CoresAvailable();
  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(options.context_length * options.parallel);
  params.n_seq_max = static_cast<uint32_t>(options.parallel);
  params.n_batch = static_cast<uint32_t>(options.batch_size);
  params.n_ubatch = static_cast<uint32_t>(options.ubatch_size);
  params.n_threads = threads;
  params.n_threads_batch = options.batch_threads > 0 ? options.batch_threads : threads;
  params.type_k = KvType(options.kv_cache_type);
  params.type_v = KvType(options.kv_cache_type);
  params.flash_attn_type = FlashAttention(options.flash_attention);
  params.kv_unified = options.kv_unified;
  params.no_perf = true;
  llama_context* context = llama_init_from_model(model, params);
  if (context == nullptr) {
    llama_model_free(model);
    return absl::InvalidArgumentError(StrCat(
        gguf.string(), ": llama.cpp could not create a context of ", params.n_ctx,
        " tokens with these parameters (a quantized kv_cache_type needs flash_attention; the "
        "reason is in the log above)"));
  }
  if (llama_n_ctx_seq(context) < static_cast<uint32_t>(options.context_length)) {
    const uint32_t got = llama_n_ctx_seq(context);
    llama_free(context);
    llama_model_free(model);
    return absl::InvalidArgumentError(StrCat(gguf.string(), ": parameters.context_length ",
                                             options.context_length,
                                             " exceeds what the model "
                                             "supports per sequence (",
                                             got, ")"));
  }
  std::unique_ptr<Embedder> embedder;
  if (options.embeddings) {
    absl::StatusOr<int> pooling = ResolvePooling(model, options.pooling, gguf.string());
    absl::StatusOr<std::unique_ptr<Embedder>> made =
        pooling.ok() ? Embedder::Create(model, options, *pooling, gguf.string())
                     : absl::StatusOr<std::unique_ptr<Embedder>>(pooling.status());
    if (!made.ok()) {
      llama_free(context);
      llama_model_free(model);
      return made.status();
    }
    embedder = *std::move(made);
  }
  LoadedModel loaded;
  loaded.model = model;
  loaded.context = context;
  loaded.embedder = std::move(embedder);
  return loaded;
}

uint64_t KvCacheBytes(const llama_model* model, const llama_context* context,
                      const LlamaOptions& options, const Embedder* embedder) {
  // The embeddings context's cache is f16 (llama.cpp's default), whatever kv_cache_type says.
  const double kv_per_token = static_cast<double>(llama_model_n_layer(model)) *
                              static_cast<double>(KvElementsPerTokenLayer(model));
  uint64_t bytes = static_cast<uint64_t>(static_cast<double>(llama_n_ctx(context)) * kv_per_token *
                                         KvCacheElementBytes(options.kv_cache_type));
  if (embedder != nullptr) {
    bytes += static_cast<uint64_t>(static_cast<double>(embedder->context_tokens()) * kv_per_token *
                                   KvCacheElementBytes("f16"));
  }
  return bytes;
}

}  // namespace inferd
