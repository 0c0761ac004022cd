#include "ops/text/hf_tokenizer.h"

#include <algorithm>
#include <string>

#include "inferd_tokenizers.h"

namespace inferd {
namespace {

// Takes ownership of an error string from the C ABI.
std::string TakeError(char* error) {
  std::string message = error != nullptr ? error : "unknown tokenizers error";
  inferd_tok_free_string(error);
  return message;
}

// A first guess at the token count, so that most texts encode in one call: a token rarely
// covers less than one byte, plus room for special tokens.
constexpr size_t kFirstCapacity = 64;

}  // namespace

void HfTokenizer::Free::operator()(InferdTokenizer* tokenizer) const { inferd_tok_free(tokenizer); }

HfTokenizer::HfTokenizer(InferdTokenizer* tokenizer) : tokenizer_(tokenizer) {
  int has_padding = 0;
  uint32_t pad_id = 0;
  size_t truncation = 0;
  if (inferd_tok_declared(tokenizer, &has_padding, &pad_id, &truncation) == 0) {
    if (has_padding != 0) declared_pad_id_ = pad_id;
    if (truncation != 0) declared_truncation_ = truncation;
  }
}

absl::StatusOr<HfTokenizer> HfTokenizer::Load(const std::filesystem::path& path) {
  char* error = nullptr;
  InferdTokenizer* tokenizer = inferd_tok_from_file(path.c_str(), &error);
  if (tokenizer == nullptr) return absl::InvalidArgumentError(TakeError(error));
  return HfTokenizer(tokenizer);
}

absl::Status HfTokenizer::Configure(size_t max_length, std::optional<uint32_t> pad_id) {
  char* error = nullptr;
  if (inferd_tok_configure(tokenizer_.get(), max_length, pad_id.has_value() ? 1 : 0,
                           pad_id.value_or(0), &error) != 0) {
    return absl::InvalidArgumentError(TakeError(error));
  }
  return absl::OkStatus();
}

absl::StatusOr<Encoded> HfTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  Encoded out;
  size_t capacity = std::min(kFirstCapacity, text.size() + 8);
  // Two tries at most: the first call that does not fit reports the exact count.
  for (int attempt = 0; attempt < 2; ++attempt) {
    out.ids.resize(capacity);
    out.mask.resize(capacity);
    out.type_ids.resize(capacity);
    char* error = nullptr;
    const int64_t count =
        inferd_tok_encode(tokenizer_.get(), reinterpret_cast<const uint8_t*>(text.data()),
                          text.size(), add_special_tokens ? 1 : 0, out.ids.data(), out.mask.data(),
                          out.type_ids.data(), capacity, &error);
    if (count == -1) return absl::InvalidArgumentError(TakeError(error));
    if (count < 0) return absl::InternalError(TakeError(error));
    if (static_cast<size_t>(count) <= capacity) {
      out.ids.resize(count);
      out.mask.resize(count);
      out.type_ids.resize(count);
      return out;
    }
    capacity = static_cast<size_t>(count);
  }
  return absl::InternalError("tokenizers returned a different token count for the same text");
}

}  // namespace inferd
