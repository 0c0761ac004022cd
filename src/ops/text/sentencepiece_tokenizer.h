// A SentencePiece .model (unigram or BPE) for the tokenize op: Debian's libsentencepiece
// 0.1.97, run in a module of its own (sentencepiece_shim.h and docs/text-ops.md say why),
// opened once per process on the first Load. Owns the loaded model; errors are absl::Status.
#ifndef INFERD_OPS_TEXT_SENTENCEPIECE_TOKENIZER_H_
#define INFERD_OPS_TEXT_SENTENCEPIECE_TOKENIZER_H_

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/text/encoded.h"

struct InferdSpm;

namespace inferd {

struct SentencePieceApi;

class SentencePieceTokenizer {
 public:
  // InvalidArgument carrying SentencePiece's message for a file that is not a model;
  // FailedPrecondition when the module cannot be opened (an incomplete installation).
  static absl::StatusOr<SentencePieceTokenizer> Load(const std::filesystem::path& path);

  // Caps every encoding at `max_length` ids, BOS and EOS included (added when asked: the
  // model must have them). Call before sharing the tokenizer. InvalidArgument when
  // max_length leaves no room for a piece beside them.
  absl::Status Configure(size_t max_length, bool add_bos, bool add_eos);

  // Python sentencepiece's `encode(text, add_bos=..., add_eos=...)` with the pieces cut to
  // fit max_length (BOS and EOS kept); mask 1, type id 0. Bytes that are not UTF-8 are
  // InvalidArgument "not UTF-8 (byte K)" (SentencePiece itself would replace them
  // silently); any other failure is Internal. Thread-safe.
  absl::StatusOr<Encoded> Encode(std::string_view text) const;

  // The model's BOS, EOS and pad pieces, when it has them.
  std::optional<uint32_t> bos_id() const;
  std::optional<uint32_t> eos_id() const;
  std::optional<uint32_t> declared_pad_id() const;

 private:
  struct Free {
    const SentencePieceApi* api;
    void operator()(InferdSpm* spm) const;
  };
  SentencePieceTokenizer(const SentencePieceApi* api, InferdSpm* spm);

  const SentencePieceApi* api_;
  std::unique_ptr<InferdSpm, Free> spm_;
  size_t max_pieces_ = 0;
  bool add_bos_ = false, add_eos_ = false;
};

}  // namespace inferd

#endif  // INFERD_OPS_TEXT_SENTENCEPIECE_TOKENIZER_H_
