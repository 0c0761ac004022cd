#include "ops/text/tokenize_op.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/pipeline/op_registry.h"
#include "core/testing/temp_dir.h"
#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/text/register_text_ops.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Expected ids below are Python's: Tokenizer.from_file(f).encode(text[, add_special_tokens])
// with tokenizers 0.23.2 (enable_truncation / enable_padding where the test says so), and
// SentencePieceProcessor(model_file=f).encode(text[, add_bos=, add_eos=]) with sentencepiece
// 0.2.3 for the .model files.
class TokenizeOpTest : public ::testing::Test {
 protected:
  TokenizeOpTest() {
    RegisterTextOps(registry_);
    for (const char* name :
         {"wordpiece.json", "wordpiece_padded.json", "spm_unigram.model", "spm_bpe.model"}) {
      std::filesystem::copy_file(std::filesystem::path(INFERD_TOKENIZER_TEST_DATA) / name,
                                 dir_.path() / name);
    }
  }

  absl::StatusOr<std::unique_ptr<PipelineOp>> Make(const std::string& params) {
    const OpFactory* factory = registry_.Find("tokenize");
    EXPECT_NE(factory, nullptr);
    return (*factory)(
        OpLoadRequest{"models/p/config.yaml: pipeline.steps[0]", params, dir_.path()});
  }

  std::unique_ptr<PipelineOp> MakeOk(const std::string& params) {
    absl::StatusOr<std::unique_ptr<PipelineOp>> op = Make(params);
    EXPECT_TRUE(op.ok()) << op.status();
    return op.ok() ? *std::move(op) : nullptr;
  }

  static Tensor Texts(const std::vector<std::string>& texts) {
    std::vector<std::string_view> views(texts.begin(), texts.end());
    return MakeBytesTensor(Shape{static_cast<int64_t>(texts.size())}, views).value();
  }

  static absl::StatusOr<std::vector<Tensor>> Run(const PipelineOp& op,
                                                 const std::vector<std::string>& texts) {
    std::vector<Tensor> in{Texts(texts)};
    return op.Run(in);
  }

  static std::vector<int64_t> Row(const Tensor& t, int64_t row) {
    const int64_t width = t.shape().back();
    const int64_t* data = t.data_as<int64_t>() + row * width;
    return {data, data + width};
  }

  OpRegistry registry_;
  testing::TempDir dir_{"tokenize_op"};
};

TEST_F(TokenizeOpTest, PortsFollowMaxLength) {
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 12}");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->heavy());
  ASSERT_EQ(op->inputs().size(), 1u);
  EXPECT_EQ(op->inputs()[0].name, "text");
  EXPECT_EQ(op->inputs()[0].datatype, DataType::kBytes);
  ASSERT_EQ(op->outputs().size(), 3u);
  for (const TensorSpec& spec : op->outputs()) {
    EXPECT_EQ(spec.datatype, DataType::kInt64);
    EXPECT_EQ(spec.dims, Shape{12});
  }
  EXPECT_EQ(op->outputs()[0].name, "ids");
  EXPECT_EQ(op->outputs()[1].name, "attention_mask");
  EXPECT_EQ(op->outputs()[2].name, "type_ids");
}

TEST_F(TokenizeOpTest, IdsMatchPythonTokenizersPaddedWithZeroMask) {
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 12}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"What a lovely day!", "Café", ""});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), (Shape{3, 12}));
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(2, 27, 39, 32, 51, 5, 74, 64, 0, 3, 0, 0));
  EXPECT_THAT(Row((*out)[1], 0), ElementsAre(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0));
  EXPECT_THAT(Row((*out)[0], 1), ElementsAre(2, 62, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(Row((*out)[0], 2), ElementsAre(2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(Row((*out)[1], 2), ElementsAre(1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(Row((*out)[2], 0), ElementsAreArray(std::vector<int64_t>(12, 0)));
}

TEST_F(TokenizeOpTest, TruncatesToMaxLengthKeepingSpecialTokens) {
  // Python: enable_truncation(5) then encode.
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 5}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"the quick brown fox jumps over the lazy dog"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(2, 58, 21, 52, 3));
  EXPECT_THAT(Row((*out)[1], 0), ElementsAre(1, 1, 1, 1, 1));
}

TEST_F(TokenizeOpTest, PaddingAndTruncationDeclaredInTheFileApply) {
  // The file pads left with pad_id 1 and truncates at 6; max_length 8 pads to 8 (Python:
  // enable_padding(direction="left", pad_id=1, length=8)).
  auto op = MakeOk("{tokenizer: wordpiece_padded.json, max_length: 8}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"the quick brown fox jumps over the lazy dog", "hello"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(1, 1, 2, 58, 21, 52, 40, 3));
  EXPECT_THAT(Row((*out)[1], 0), ElementsAre(0, 0, 1, 1, 1, 1, 1, 1));
  EXPECT_THAT(Row((*out)[0], 1), ElementsAre(1, 1, 1, 1, 1, 2, 59, 3));
  EXPECT_THAT(Row((*out)[1], 1), ElementsAre(0, 0, 0, 0, 0, 1, 1, 1));
}

TEST_F(TokenizeOpTest, PadIdAndAddSpecialTokensParams) {
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 4, pad_id: 7}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {""});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(2, 3, 7, 7));

  auto bare = MakeOk("{tokenizer: wordpiece.json, max_length: 3, add_special_tokens: false}");
  ASSERT_NE(bare, nullptr);
  out = Run(*bare, {"Café"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(62, 0, 0));
  EXPECT_THAT(Row((*out)[1], 0), ElementsAre(1, 0, 0));
}

TEST_F(TokenizeOpTest, Int32Outputs) {
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 8, datatype: INT32}");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->outputs()[0].datatype, DataType::kInt32);
  auto out = Run(*op, {"hello world"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].type(), DataType::kInt32);
  const int32_t* ids = (*out)[0].data_as<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(ids, ids + 8), ElementsAre(2, 59, 27, 46, 49, 43, 35, 3));
}

TEST_F(TokenizeOpTest, InvalidUtf8NamesElementAndByte) {
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 8}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"fine", std::string("ab\xff", 3)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("element 1: not UTF-8 (byte 2)"));
  // A truncated multi-byte character (the first byte of "é" alone) too.
  out = Run(*op, {std::string("caf\xc3", 4)});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("element 0: not UTF-8 (byte 3)"));
}

TEST_F(TokenizeOpTest, TextOverMaxTextBytesIsRefusedNamingTheParam) {
  auto op = MakeOk("{tokenizer: wordpiece.json, max_length: 8, max_text_bytes: 10}");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(Run(*op, {"0123456789"}).ok());
  // Row 1 is over the limit and row 0 is not UTF-8: the length check runs first, for every row.
  auto out = Run(*op, {std::string("\xff"), "01234567890"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("element 1: 11 bytes"));
  EXPECT_THAT(out.status().message(), HasSubstr("params.max_text_bytes"));
}

TEST_F(TokenizeOpTest, BadParamsAreErrorsNamingTheField) {
  struct Case {
    std::string params, expected;
  };
  const std::vector<Case> cases = {
      {"{tokenizer: wordpiece.json, max_length: 8, truncate: true}", "truncate"},
      {"{tokenizer: wordpiece.json}", "params.max_length: is required"},
      {"{max_length: 8}", "params.tokenizer: is required"},
      {"{tokenizer: wordpiece.json, max_length: 0}", "params.max_length"},
      {"{tokenizer: wordpiece.json, max_length: 8193}", "params.max_length"},
      {"{tokenizer: wordpiece.json, max_length: 2}",
       "params.max_length: max_length 2 leaves no room"},
      {"{tokenizer: wordpiece.json, max_length: 8, datatype: FP32}", "must be INT64 or INT32"},
      {"{tokenizer: wordpiece.json, max_length: 8, pad_id: -1}", "params.pad_id"},
      {"{tokenizer: wordpiece.json, max_length: 8, max_text_bytes: 0}", "params.max_text_bytes"},
      {"{tokenizer: /etc/passwd, max_length: 8}", "is absolute"},
      {"{tokenizer: ../wordpiece.json, max_length: 8}", "leaves the version folder"},
      {"{tokenizer: missing.json, max_length: 8}", "params.tokenizer: cannot read"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<PipelineOp>> op = Make(c.params);
    ASSERT_FALSE(op.ok()) << c.params;
    EXPECT_THAT(op.status().message(), HasSubstr("models/p/config.yaml: pipeline.steps[0]"));
    EXPECT_THAT(op.status().message(), HasSubstr(c.expected)) << c.params;
  }
}

TEST_F(TokenizeOpTest, AFileThatIsNotATokenizerIsRefusedAtLoad) {
  std::ofstream(dir_.path() / "broken.json") << "{\"model\": 3}";
  absl::StatusOr<std::unique_ptr<PipelineOp>> op = Make("{tokenizer: broken.json, max_length: 8}");
  ASSERT_FALSE(op.ok());
  EXPECT_THAT(op.status().message(), HasSubstr("params.tokenizer: cannot load"));
}

TEST_F(TokenizeOpTest, SentencePieceUnigramIdsMatchPythonPaddedWithTheModelsPadPiece) {
  auto op = MakeOk("{tokenizer: spm_unigram.model, max_length: 10}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"hello world", "", "caf\u00e9 cr\u00e8me"});
  ASSERT_TRUE(out.ok()) << out.status();
  // The model's pad piece is 3; Python adds no BOS/EOS unless asked.
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(35, 33, 32, 16, 59, 8, 18, 3, 3, 3));
  EXPECT_THAT(Row((*out)[1], 0), ElementsAre(1, 1, 1, 1, 1, 1, 1, 0, 0, 0));
  EXPECT_THAT(Row((*out)[2], 0), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(Row((*out)[0], 1), ElementsAre(3, 3, 3, 3, 3, 3, 3, 3, 3, 3));
  EXPECT_THAT(Row((*out)[1], 1), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(Row((*out)[0], 2), ElementsAre(34, 5, 48, 11, 34, 6, 53, 20, 7, 3));
}

TEST_F(TokenizeOpTest, SentencePieceTruncationKeepsBosAndEos) {
  auto op = MakeOk("{tokenizer: spm_unigram.model, max_length: 5, add_bos: true, add_eos: true}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"hello world", ""});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Row((*out)[0], 0), ElementsAre(1, 35, 33, 32, 2));
  EXPECT_THAT(Row((*out)[0], 1), ElementsAre(1, 2, 3, 3, 3));
  EXPECT_THAT(Row((*out)[1], 1), ElementsAre(1, 1, 0, 0, 0));
}

TEST_F(TokenizeOpTest, SentencePieceBpeWithEosAndDefaultPadIdZero) {
  auto op = MakeOk("{tokenizer: spm_bpe.model, max_length: 12, add_eos: true, datatype: INT32}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"the lazy dog"});
  ASSERT_TRUE(out.ok()) << out.status();
  const int32_t* ids = (*out)[0].data_as<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(ids, ids + 12),
              ElementsAre(6, 28, 34, 33, 52, 49, 17, 32, 54, 1, 0, 0));
}

TEST_F(TokenizeOpTest, SentencePieceInvalidUtf8NamesElementAndByte) {
  auto op = MakeOk("{tokenizer: spm_unigram.model, max_length: 8}");
  ASSERT_NE(op, nullptr);
  auto out = Run(*op, {"fine", std::string("ab\xff", 3)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("element 1: not UTF-8 (byte 2)"));
}

TEST_F(TokenizeOpTest, SentencePieceParamsAreCheckedAgainstTheModel) {
  struct Case {
    std::string params, expected;
  };
  const std::vector<Case> cases = {
      {"{tokenizer: spm_bpe.model, max_length: 8, add_bos: true}",
       "params.add_bos: the model has no BOS piece"},
      {"{tokenizer: spm_unigram.model, max_length: 8, add_special_tokens: true}",
       "params.add_special_tokens: is for a tokenizer.json"},
      {"{tokenizer: wordpiece.json, max_length: 8, add_eos: true}",
       "params.add_eos: is for a SentencePiece .model"},
      {"{tokenizer: spm_unigram.model, max_length: 2, add_bos: true, add_eos: true}",
       "params.max_length: max_length 2 leaves no room"},
      {"{tokenizer: spm_unigram.model, max_length: 8, add_bos: 3}", "params.add_bos"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<PipelineOp>> op = Make(c.params);
    ASSERT_FALSE(op.ok()) << c.params;
    EXPECT_THAT(op.status().message(), HasSubstr(c.expected)) << c.params;
  }
}

TEST_F(TokenizeOpTest, ABrokenSentencePieceModelIsRefusedAtLoadNamingTheFile) {
  std::ofstream(dir_.path() / "broken.model") << "not a SentencePiece model";
  absl::StatusOr<std::unique_ptr<PipelineOp>> op = Make("{tokenizer: broken.model, max_length: 8}");
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(op.status().message(),
              HasSubstr("params.tokenizer: cannot load SentencePiece model"));
  EXPECT_THAT(op.status().message(), HasSubstr("broken.model"));
}

}  // namespace
}  // namespace inferd
