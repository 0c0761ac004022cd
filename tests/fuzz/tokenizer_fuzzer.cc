// The tokenize op (ops/text) on arbitrary bytes from a client: the Hugging Face tokenizers
// crate through its C ABI (UTF-8 checked in Rust, panics caught there) and SentencePiece in
// its module (the same UTF-8 check first), with the tiny committed tokenizers of
// tests/data/tokenizers/. Input: the bytes of one text; the op also sees them split in two
// rows. Only the client's text may be refused (400), and every answer is [rows, max_length]
// with its padding (mask 0) on one side.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/types/bytes_tensor.h"
#include "ops/text/tokenize_op.h"
#include "tests/fuzz/fuzz_server.h"

namespace {

std::vector<std::unique_ptr<inferd::PipelineOp>>* ops = nullptr;

std::unique_ptr<inferd::PipelineOp> Make(const char* params) {
  auto op =
      inferd::MakeTokenizeOp(inferd::OpLoadRequest{"fuzz", params, INFERD_FUZZ_TOKENIZERS_DIR});
  if (!op.ok()) __builtin_trap();
  return *std::move(op);
}

void Check(const std::vector<inferd::Tensor>& outputs, int64_t rows) {
  const inferd::Shape& shape = outputs[0].shape();
  if (shape.size() != 2 || shape[0] != rows) __builtin_trap();
  for (const inferd::Tensor& t : outputs) {
    if (t.shape() != shape) __builtin_trap();
  }
  const int64_t* mask = outputs[1].data_as<int64_t>();
  // Padding is on one side (right, or left where the file declares it): one change at most.
  for (int64_t r = 0; r < rows; ++r) {
    int changes = 0;
    for (int64_t c = 0; c < shape[1]; ++c) {
      const int64_t m = mask[r * shape[1] + c];
      if (m != 0 && m != 1) __builtin_trap();
      if (c > 0 && m != mask[r * shape[1] + c - 1]) ++changes;
    }
    if (changes > 1) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  inferd::fuzz::SilenceLogs();
  ops = new std::vector<std::unique_ptr<inferd::PipelineOp>>();
  ops->push_back(Make("{tokenizer: wordpiece.json, max_length: 64, max_text_bytes: 4096}"));
  ops->push_back(Make("{tokenizer: wordpiece_padded.json, max_length: 16}"));
  ops->push_back(
      Make("{tokenizer: spm_unigram.model, max_length: 64, add_bos: true, add_eos: true}"));
  ops->push_back(Make("{tokenizer: spm_bpe.model, max_length: 8, max_text_bytes: 4096}"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> halves = {text.substr(0, size / 2), text.substr(size / 2)};
  for (const auto& op : *ops) {
    for (size_t count : {size_t{1}, size_t{2}}) {
      const std::vector<std::string_view> rows =
          count == 1 ? std::vector<std::string_view>{text} : halves;
      auto input = inferd::MakeBytesTensor({static_cast<int64_t>(count)}, rows);
      if (!input.ok()) __builtin_trap();
      auto out = op->Run(std::span<const inferd::Tensor>(&*input, 1));
      if (out.ok()) {
        Check(*out, static_cast<int64_t>(count));
      } else if (out.status().code() != absl::StatusCode::kInvalidArgument) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
