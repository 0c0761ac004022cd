#include "ops/text/tokenize_op.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/config/config_field_reader.h"
#include "core/pipeline/op_params.h"
#include "core/types/bytes_tensor.h"
#include "ops/text/hf_tokenizer.h"
#include "ops/text/sentencepiece_tokenizer.h"

namespace inferd {
namespace {

constexpr int64_t kMaxMaxLength = 8192;
constexpr int64_t kDefaultMaxTextBytes = int64_t{1} << 20;
constexpr int64_t kMaxMaxTextBytes = int64_t{64} << 20;
// A repository file is trusted, but a typo pointing at model weights must not be parsed as
// JSON; the largest public tokenizer.json files are ~20 MB.
constexpr uintmax_t kMaxTokenizerFileBytes = uintmax_t{256} << 20;

struct Params {
  std::filesystem::path tokenizer;
  // A `.model` file is SentencePiece's; any other is a Hugging Face tokenizer.json.
  bool sentencepiece = false;
  int64_t max_length = 0;
  bool add_special_tokens = true;         // tokenizer.json only
  bool add_bos = false, add_eos = false;  // SentencePiece only
  std::optional<uint32_t> pad_id;
  DataType datatype = DataType::kInt64;
  int64_t max_text_bytes = kDefaultMaxTextBytes;
};

absl::StatusOr<Params> ParseParams(const OpLoadRequest& request) {
  const FieldReader r(request.field);
  Params p;
  ASSIGN_OR_RETURN(const YAML::Node node,
                   LoadOpParams(request, r,
                                {"tokenizer", "max_length", "add_special_tokens", "add_bos",
                                 "add_eos", "pad_id", "datatype", "max_text_bytes"}));
  if (!node["tokenizer"]) {
    return r.Error("params.tokenizer",
                   "is required: the tokenizer.json (or SentencePiece .model) file to use");
  }
  ASSIGN_OR_RETURN(std::string tokenizer, r.String(node["tokenizer"], "params.tokenizer"));
  ASSIGN_OR_RETURN(p.tokenizer,
                   ResolveOpAsset(r, "params.tokenizer", request.version_dir, tokenizer,
                                  kMaxTokenizerFileBytes, "tokenizer.json"));
  // The name the config gives decides (not a symlink's target).
  p.sentencepiece = std::filesystem::path(tokenizer).extension() == ".model";
  if (!node["max_length"]) {
    return r.Error("params.max_length",
                   "is required: the token count the next step takes (outputs are "
                   "[max_length], padded or truncated)");
  }
  ASSIGN_OR_RETURN(p.max_length,
                   r.IntegerIn(node["max_length"], "params.max_length", 1, kMaxMaxLength));
  if (node["add_special_tokens"]) {
    if (p.sentencepiece) {
      return r.Error("params.add_special_tokens",
                     "is for a tokenizer.json; a SentencePiece .model takes add_bos and add_eos");
    }
    ASSIGN_OR_RETURN(p.add_special_tokens,
                     r.Bool(node["add_special_tokens"], "params.add_special_tokens"));
  }
  for (const char* name : {"add_bos", "add_eos"}) {
    if (!node[name]) continue;
    const std::string field = StrCat("params.", name);
    if (!p.sentencepiece) {
      return r.Error(field,
                     "is for a SentencePiece .model; a tokenizer.json adds its special tokens "
                     "through add_special_tokens");
    }
    ASSIGN_OR_RETURN(const bool value, r.Bool(node[name], field));
    (name == std::string_view("add_bos") ? p.add_bos : p.add_eos) = value;
  }
  if (node["pad_id"]) {
    ASSIGN_OR_RETURN(int64_t pad_id, r.IntegerIn(node["pad_id"], "params.pad_id", 0, INT32_MAX));
    p.pad_id = static_cast<uint32_t>(pad_id);
  }
  if (node["datatype"]) {
    ASSIGN_OR_RETURN(std::string type, r.String(node["datatype"], "params.datatype"));
    if (type == "INT64") {
      p.datatype = DataType::kInt64;
    } else if (type == "INT32") {
      p.datatype = DataType::kInt32;
    } else {
      return r.Error("params.datatype", "must be INT64 or INT32");
    }
  }
  if (node["max_text_bytes"]) {
    ASSIGN_OR_RETURN(p.max_text_bytes, r.IntegerIn(node["max_text_bytes"], "params.max_text_bytes",
                                                   1, kMaxMaxTextBytes));
  }
  return p;
}

// The loaded tokenizer: exactly one of the two.
struct Tokenizers {
  std::optional<HfTokenizer> hf;
  std::optional<SentencePieceTokenizer> sentencepiece;
};

class TokenizeOp : public PipelineOp {
 public:
  TokenizeOp(Params params, Tokenizers tokenizers)
      : params_(std::move(params)),
        tokenizers_(std::move(tokenizers)),
        // Without a padding section in tokenizer.json we pad; with one the crate pads (in
        // its direction) with its pad_id, which params.pad_id replaced in Configure. A
        // SentencePiece model's own pad piece is the default there.
        pad_id_(
            params_.pad_id.value_or((tokenizers_.hf ? tokenizers_.hf->declared_pad_id()
                                                    : tokenizers_.sentencepiece->declared_pad_id())
                                        .value_or(0))) {
    inputs_ = {TensorSpec{"text", DataType::kBytes, {}}};
    const Shape shape{params_.max_length};
    outputs_ = {TensorSpec{"ids", params_.datatype, shape},
                TensorSpec{"attention_mask", params_.datatype, shape},
                TensorSpec{"type_ids", params_.datatype, shape}};
  }

  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  const std::vector<TensorSpec>& outputs() const override { return outputs_; }
  bool heavy() const override { return true; }

  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const override {
    const std::vector<std::string_view> texts = BytesElements(inputs[0]);
    const int64_t rows = static_cast<int64_t>(texts.size());
    const Shape shape{rows, params_.max_length};
    std::vector<Tensor> out;
    for (int i = 0; i < 3; ++i) {
      ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateForOverwrite(params_.datatype, shape));
      out.push_back(std::move(t));
    }
    // Every row's length is checked before any is tokenized.
    for (size_t row = 0; row < texts.size(); ++row) {
      if (static_cast<int64_t>(texts[row].size()) > params_.max_text_bytes) {
        return absl::InvalidArgumentError(StrCat(
            "element ", row, ": ", texts[row].size(), " bytes of text; this pipeline takes ",
            "at most ", params_.max_text_bytes, " (params.max_text_bytes): send shorter text"));
      }
    }
    const size_t width = static_cast<size_t>(params_.max_length);
    for (size_t row = 0; row < texts.size(); ++row) {
      absl::StatusOr<Encoded> encoded =
          tokenizers_.hf ? tokenizers_.hf->Encode(texts[row], params_.add_special_tokens)
                         : tokenizers_.sentencepiece->Encode(texts[row]);
      if (!encoded.ok()) {
        return absl::Status(encoded.status().code(),
                            StrCat("element ", row, ": ", encoded.status().message()));
      }
      // Configure capped the crate's truncation at max_length; this cut only matters where
      // the special tokens alone would not fit, which Configure refused at load.
      const size_t count = std::min(encoded->ids.size(), width);
      for (size_t j = 0; j < width; ++j) {
        const bool token = j < count;
        Write(out[0], row * width + j, token ? encoded->ids[j] : pad_id_);
        Write(out[1], row * width + j, token ? encoded->mask[j] : 0);
        Write(out[2], row * width + j, token ? encoded->type_ids[j] : 0);
      }
    }
    return out;
  }

 private:
  void Write(Tensor& t, size_t at, uint32_t value) const {
    if (params_.datatype == DataType::kInt64) {
      t.mutable_data_as<int64_t>()[at] = value;
    } else {
      t.mutable_data_as<int32_t>()[at] = static_cast<int32_t>(value);
    }
  }

  const Params params_;
  const Tokenizers tokenizers_;
  const uint32_t pad_id_;
  std::vector<TensorSpec> inputs_, outputs_;
};

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeSentencePieceOp(const FieldReader& r,
                                                                Params params) {
  absl::StatusOr<SentencePieceTokenizer> tokenizer = SentencePieceTokenizer::Load(params.tokenizer);
  if (!tokenizer.ok()) {
    return r.Error("params.tokenizer",
                   StrCat("cannot load SentencePiece model ", params.tokenizer.string(), ": ",
                          tokenizer.status().message()));
  }
  if (params.add_bos && !tokenizer->bos_id()) {
    return r.Error("params.add_bos", "the model has no BOS piece (its bos_id is -1)");
  }
  if (params.add_eos && !tokenizer->eos_id()) {
    return r.Error("params.add_eos", "the model has no EOS piece (its eos_id is -1)");
  }
  if (absl::Status s = tokenizer->Configure(static_cast<size_t>(params.max_length), params.add_bos,
                                            params.add_eos);
      !s.ok()) {
    return r.Error("params.max_length", std::string(s.message()));
  }
  Tokenizers tokenizers;
  tokenizers.sentencepiece.emplace(*std::move(tokenizer));
  return std::make_unique<TokenizeOp>(std::move(params), std::move(tokenizers));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeTokenizeOp(const OpLoadRequest& request) {
  ASSIGN_OR_RETURN(Params params, ParseParams(request));
  const FieldReader r(request.field);
  if (params.sentencepiece) return MakeSentencePieceOp(r, std::move(params));
  absl::StatusOr<HfTokenizer> tokenizer = HfTokenizer::Load(params.tokenizer);
  if (!tokenizer.ok()) {
    return r.Error("params.tokenizer", StrCat("cannot load ", params.tokenizer.string(), ": ",
                                              tokenizer.status().message()));
  }
  if (absl::Status s = tokenizer->Configure(static_cast<size_t>(params.max_length), params.pad_id);
      !s.ok()) {
    return r.Error("params.max_length", std::string(s.message()));
  }
  Tokenizers tokenizers;
  tokenizers.hf.emplace(*std::move(tokenizer));
  return std::make_unique<TokenizeOp>(std::move(params), std::move(tokenizers));
}

}  // namespace inferd
