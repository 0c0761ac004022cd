// The tokens of one (query, document) pair for a cross-encoder reranker, built exactly as
// llama.cpp's server builds them (format_prompt_rerank in tools/server), so scores match its:
// the model's "rerank" chat template with {query} and {document} replaced, tokenised with
// special tokens parsed; or, without one, [BOS] query [EOS] [SEP] document [EOS], each special
// token only where the vocabulary asks for it (EOS falling back to SEP when it has none).
//
// Thread-safety: reads the model and its vocabulary only.
#ifndef INFERD_BACKENDS_LLAMA_RERANK_PROMPT_H_
#define INFERD_BACKENDS_LLAMA_RERANK_PROMPT_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "backends/llama/tokenizer.h"

struct llama_model;

namespace inferd {

std::vector<int32_t> RerankPromptTokens(const llama_model* model, const Tokenizer& tokenizer,
                                        std::string_view query, std::string_view document);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_RERANK_PROMPT_H_
