#include "backends/llama/rerank_prompt.h"

#include <string>

#include <llama.h>

namespace inferd {
namespace {

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
}

}  // namespace

std::vector<int32_t> RerankPromptTokens(const llama_model* model, const Tokenizer& tokenizer,
                                        std::string_view query, std::string_view document) {
  if (const char* rerank = llama_model_chat_template(model, "rerank"); rerank != nullptr) {
    std::string prompt = rerank;
    ReplaceAll(prompt, "{query}", query);
    ReplaceAll(prompt, "{document}", document);
    return tokenizer.Tokenize(prompt, /*add_special=*/false, /*parse_special=*/true);
  }
  const llama_vocab* vocab = tokenizer.vocab();
  llama_token eos = llama_vocab_eos(vocab);
  if (eos == LLAMA_TOKEN_NULL) eos = llama_vocab_sep(vocab);
  std::vector<int32_t> tokens;
  if (llama_vocab_get_add_bos(vocab)) tokens.push_back(llama_vocab_bos(vocab));
  const std::vector<int32_t> query_tokens = tokenizer.Tokenize(query, false, false);
  tokens.insert(tokens.end(), query_tokens.begin(), query_tokens.end());
  if (llama_vocab_get_add_eos(vocab)) tokens.push_back(eos);
  if (llama_vocab_get_add_sep(vocab)) tokens.push_back(llama_vocab_sep(vocab));
  const std::vector<int32_t> document_tokens = tokenizer.Tokenize(document, false, false);
  tokens.insert(tokens.end(), document_tokens.begin(), document_tokens.end());
  if (llama_vocab_get_add_eos(vocab)) tokens.push_back(eos);
  return tokens;
}

}  // namespace inferd
