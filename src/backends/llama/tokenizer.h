// A model's vocabulary as the engine uses it: text to tokens and tokens to text.
//
// Thread-safety: const after construction; every method may run on several threads at once
// (llama.cpp's tokenizer reads the vocabulary only). Ownership: borrows the vocabulary, which
// the model owns and must outlive this.
#ifndef INFERD_BACKENDS_LLAMA_TOKENIZER_H_
#define INFERD_BACKENDS_LLAMA_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct llama_vocab;

namespace inferd {

class Tokenizer {
 public:
  explicit Tokenizer(const llama_vocab* vocab);

  // Tokens of `text` as the engine sees a prompt (special tokens parsed, BOS added when the
  // vocabulary wants it).
  std::vector<int32_t> Tokenize(std::string_view text, bool add_special = true,
                                bool parse_special = true) const;
  // The text of `token`; a special token's own text only when `special`.
  std::string Piece(int32_t token, bool special = false) const;

  const llama_vocab* vocab() const { return vocab_; }
  int32_t vocabulary_size() const { return vocabulary_size_; }
  // The longest text one token stands for: a prompt of more than n tokens times this many
  // bytes cannot fit in n tokens, whatever it says.
  size_t max_token_bytes() const { return max_token_bytes_; }

 private:
  const llama_vocab* const vocab_;
  int32_t vocabulary_size_ = 0;
  size_t max_token_bytes_ = 1;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_TOKENIZER_H_
