#include "backends/llama/tokenizer.h"

#include <algorithm>

#include <llama.h>

namespace inferd {

Tokenizer::Tokenizer(const llama_vocab* vocab)
    : vocab_(vocab), vocabulary_size_(llama_vocab_n_tokens(vocab)) {
  for (int32_t token = 0; token < vocabulary_size_; ++token) {
    max_token_bytes_ = std::max(max_token_bytes_, Piece(token, /*special=*/true).size());
  }
}

std::vector<int32_t> Tokenizer::Tokenize(std::string_view text, bool add_special,
                                         bool parse_special) const {
  // A token covers at least one byte; room for the BOS/EOS the vocabulary may add.
  std::vector<int32_t> tokens(text.size() + 4);
  int32_t n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                             static_cast<int32_t>(tokens.size()), add_special, parse_special);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), add_special, parse_special);
  }
  tokens.resize(static_cast<size_t>(std::max(n, 0)));
  return tokens;
}

std::string Tokenizer::Piece(int32_t token, bool special) const {
  char buffer[128];
  int32_t n = llama_token_to_piece(vocab_, token, buffer, sizeof(buffer), 0, special);
  if (n >= 0) return std::string(buffer, static_cast<size_t>(n));
  std::string piece(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(vocab_, token, piece.data(), static_cast<int32_t>(piece.size()), 0,
                           special);
  piece.resize(static_cast<size_t>(std::max(n, 0)));
  return piece;
}

}  // namespace inferd
