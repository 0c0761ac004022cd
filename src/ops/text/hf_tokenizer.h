// A Hugging Face tokenizer.json loaded through src/rust/tokenizers_ffi (the `tokenizers`
// crate behind a C ABI): owns the Rust object, turns its error strings into absl::Status.
#ifndef INFERD_OPS_TEXT_HF_TOKENIZER_H_
#define INFERD_OPS_TEXT_HF_TOKENIZER_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "ops/text/encoded.h"

struct InferdTokenizer;

namespace inferd {

class HfTokenizer {
 public:
  // Errors are InvalidArgument carrying the crate's message (a missing file, bad JSON).
  static absl::StatusOr<HfTokenizer> Load(const std::filesystem::path& path);

  // Caps every encoding at `max_length` tokens (see inferd_tok_configure): tokenizer.json's
  // truncation kept with a max_length of at most `max_length`, else right truncation that
  // keeps the special tokens; a declared padding section pads to exactly `max_length`, with
  // `pad_id` when given. Call before sharing the tokenizer. InvalidArgument when max_length
  // leaves no room next to the special tokens.
  absl::Status Configure(size_t max_length, std::optional<uint32_t> pad_id);

  // Encodes `text` as Python's `Tokenizer.encode(text, add_special_tokens)` does: the
  // normalizer, pre-tokenizer, model and post-processor, then the truncation and padding
  // tokenizer.json declares. Bytes that are not UTF-8 are InvalidArgument "not UTF-8 (byte
  // K)"; any other failure is Internal. Thread-safe.
  absl::StatusOr<Encoded> Encode(std::string_view text, bool add_special_tokens) const;

  // The padding section's pad_id, when tokenizer.json has one.
  std::optional<uint32_t> declared_pad_id() const { return declared_pad_id_; }
  // The truncation section's max_length, when tokenizer.json has one.
  std::optional<size_t> declared_truncation() const { return declared_truncation_; }

 private:
  struct Free {
    void operator()(InferdTokenizer* tokenizer) const;
  };
  explicit HfTokenizer(InferdTokenizer* tokenizer);

  std::unique_ptr<InferdTokenizer, Free> tokenizer_;
  std::optional<uint32_t> declared_pad_id_;
  std::optional<size_t> declared_truncation_;
};

}  // namespace inferd

#endif  // INFERD_OPS_TEXT_HF_TOKENIZER_H_
