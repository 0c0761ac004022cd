#include "backends/llama/embedder.h"

#include <cmath>

#include <llama.h>

#include "common/cores.h"
#include "common/strings.h"

namespace inferd {

std::string PoolingName(int pooling) {
  switch (pooling) {
    case LLAMA_POOLING_TYPE_NONE:
      return "none";
    case LLAMA_POOLING_TYPE_MEAN:
      return "mean";
    case LLAMA_POOLING_TYPE_CLS:
      return "cls";
    case LLAMA_POOLING_TYPE_LAST:
      return "last";
    case LLAMA_POOLING_TYPE_RANK:
      return "rank";
    default:
      return StrCat("type ", pooling);
  }
}

absl::StatusOr<std::unique_ptr<Embedder>> Embedder::Create(llama_model* model,
                                                           const LlamaOptions& options, int pooling,
                                                           const std::string& file) {
  const int threads = options.threads > 0 ? options.threads : CoresAvailable();
  llama_context_params params = llama_context_default_params();
  // One input at a time, whole in one ubatch: the context needs no more than that.
  params.n_ctx = static_cast<uint32_t>(options.ubatch_size);
  params.n_batch = static_cast<uint32_t>(options.ubatch_size);
  params.n_ubatch = static_cast<uint32_t>(options.ubatch_size);
  params.n_seq_max = 1;
  // An embedding is one prompt pass: prompt-processing threads.
  params.n_threads = options.batch_threads > 0 ? options.batch_threads : threads;
  params.n_threads_batch = params.n_threads;
  params.embeddings = true;
  params.pooling_type = static_cast<enum llama_pooling_type>(pooling);
  params.flash_attn_type = options.flash_attention == "on"    ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                           : options.flash_attention == "off" ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                                              : LLAMA_FLASH_ATTN_TYPE_AUTO;
  params.no_perf = true;
  llama_context* context = llama_init_from_model(model, params);
  if (context == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(file,
               ": llama.cpp could not create the embeddings context (parameters.embeddings; "
               "the reason is in the log above)"));
  }
  const bool rank = pooling == LLAMA_POOLING_TYPE_RANK;
  // Rank pooling gives the classifier's outputs (llama_get_embeddings_seq's float[n_cls_out]).
  const int64_t dimensions = rank ? static_cast<int64_t>(llama_model_n_cls_out(model))
                                  : static_cast<int64_t>(llama_model_n_embd_out(model));
  return std::unique_ptr<Embedder>(new Embedder(context, options.ubatch_size, dimensions, rank));
}

Embedder::Embedder(llama_context* context, int64_t max_tokens, int64_t dimensions, bool rank)
    : context_(context), max_tokens_(max_tokens), dimensions_(dimensions), rank_(rank) {}

Embedder::~Embedder() { llama_free(context_); }

int64_t Embedder::context_tokens() const { return static_cast<int64_t>(llama_n_ctx(context_)); }

absl::StatusOr<std::vector<float>> Embedder::Embed(const std::vector<int32_t>& tokens) {
  if (tokens.empty() || static_cast<int64_t>(tokens.size()) > max_tokens_) {
    return absl::InvalidArgumentError(
        StrCat("an input of ", tokens.size(), " tokens (1..", max_tokens_, " fit)"));
  }
  // Each input starts from an empty cache (nothing of the previous one may leak into it).
  llama_memory_clear(llama_get_memory(context_), true);
  const int32_t n = static_cast<int32_t>(tokens.size());
  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int32_t i = 0; i < n; ++i) {
    batch.token[i] = tokens[static_cast<size_t>(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;  // pooled embeddings need every token as an output
  }
  batch.n_tokens = n;
  const int32_t rc = llama_decode(context_, batch);
  llama_batch_free(batch);
  if (rc != 0) {
    return absl::InternalError(StrCat("llama.cpp's decode of an embedding input of ", n,
                                      " tokens failed (code ", rc, ")"));
  }
  const float* pooled = llama_get_embeddings_seq(context_, 0);
  if (pooled == nullptr) return absl::InternalError("llama.cpp returned no pooled embedding");
  std::vector<float> out(pooled, pooled + dimensions_);
  if (rank_) return out;  // scores, as llama.cpp's server reports them
  double norm = 0;
  for (float v : out) norm += static_cast<double>(v) * v;
  norm = std::sqrt(norm);
  if (norm > 0) {
    for (float& v : out) v = static_cast<float>(v / norm);
  }
  return out;
}

}  // namespace inferd
