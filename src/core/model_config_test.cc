#include "core/model_config.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr char kSource[] = "models/m/config.yaml";

absl::StatusOr<ModelConfig> Parse(const std::string& yaml) {
  return ParseModelConfig(yaml, "m", kSource);
}

// The error message of parsing `yaml`, which must fail with InvalidArgument.
std::string ErrorOf(const std::string& yaml) {
  absl::StatusOr<ModelConfig> config = Parse(yaml);
  EXPECT_FALSE(config.ok()) << "parsed unexpectedly:\n" << yaml;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

constexpr char kMinimalOutputs[] = R"(
outputs:
  - {name: y, datatype: FP32, dims: [1]}
)";

std::string WithInputs(const std::string& inputs) {
  return "backend: torch\ninputs:\n" + inputs + kMinimalOutputs;
}

TEST(ModelConfigTest, ParsesFullConfig) {
  absl::StatusOr<ModelConfig> config = Parse(R"(
backend: torch
max_batch_size: 8
inputs:
  - name: features
    datatype: FP32
    dims: [256]
  - name: mask
    datatype: BOOL
    dims: [-1, 4]
outputs:
  - name: score
    datatype: FP64
    dims: [1]
instances:
  - count: 2
    device: cpu
  - count: 1
parameters:
  intra_op_threads: 4
  mode: eval
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "m");
  EXPECT_EQ(config->backend, "torch");
  EXPECT_EQ(config->max_batch_size, 8);
  EXPECT_TRUE(config->batched());
  ASSERT_EQ(config->inputs.size(), 2u);
  EXPECT_EQ(config->inputs[0].name, "features");
  EXPECT_EQ(config->inputs[0].datatype, DataType::kFp32);
  EXPECT_THAT(config->inputs[0].dims, ElementsAre(256));
  EXPECT_EQ(config->inputs[1].name, "mask");
  EXPECT_EQ(config->inputs[1].datatype, DataType::kBool);
  EXPECT_THAT(config->inputs[1].dims, ElementsAre(-1, 4));
  ASSERT_EQ(config->outputs.size(), 1u);
  EXPECT_EQ(config->outputs[0].name, "score");
  EXPECT_EQ(config->outputs[0].datatype, DataType::kFp64);
  EXPECT_THAT(config->outputs[0].dims, ElementsAre(1));
  ASSERT_EQ(config->instances.size(), 2u);
  EXPECT_EQ(config->instances[0].count, 2);
  EXPECT_EQ(config->instances[0].device, "cpu");
  EXPECT_EQ(config->instances[1].count, 1);
  EXPECT_EQ(config->instances[1].device, "cpu");
  EXPECT_THAT(config->parameters, ElementsAre(Pair("intra_op_threads", "4"), Pair("mode", "eval")));
  EXPECT_EQ(config->FindInput("mask"), &config->inputs[1]);
  EXPECT_EQ(config->FindInput("score"), nullptr);
  EXPECT_EQ(config->FindOutput("score"), &config->outputs[0]);
  EXPECT_EQ(config->FindOutput("features"), nullptr);
}

TEST(ModelConfigTest, DefaultsToOneCpuInstanceNoBatchingAndNoParameters) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: INT64, dims: [3]}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_batch_size, 0);
  EXPECT_FALSE(config->batched());
  ASSERT_EQ(config->instances.size(), 1u);
  EXPECT_EQ(config->instances[0].count, 1);
  EXPECT_EQ(config->instances[0].device, "cpu");
  EXPECT_THAT(config->parameters, IsEmpty());
}

TEST(ModelConfigTest, AcceptsEmptyParameters) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "parameters:\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->parameters, IsEmpty());
}

TEST(ModelConfigTest, FullShapePrependsBatchDimensionOnlyWhenBatched) {
  ModelConfig config;
  TensorSpec spec{"x", DataType::kFp32, {3, -1}};
  EXPECT_THAT(config.FullShape(spec), ElementsAre(3, -1));
  config.max_batch_size = 4;
  EXPECT_THAT(config.FullShape(spec), ElementsAre(-1, 3, -1));
  spec.dims.clear();
  EXPECT_THAT(config.FullShape(spec), ElementsAre(-1));
}

TEST(ModelConfigTest, RejectsUnknownTopLevelKey) {
  EXPECT_THAT(
      ErrorOf("max_batchsize: 4\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("max_batchsize: unknown field"),
            HasSubstr("max_batch_size")));
}

TEST(ModelConfigTest, RejectsMissingBackend) {
  EXPECT_THAT(ErrorOf(R"(
inputs:
  - {name: x, datatype: FP32, dims: [1]}
outputs:
  - {name: y, datatype: FP32, dims: [1]}
)"),
              AllOf(StartsWith(kSource), HasSubstr("backend: is required")));
}

TEST(ModelConfigTest, RejectsEmptyBackend) {
  EXPECT_THAT(
      ErrorOf("backend: ''\n" + std::string("inputs:\n  - {name: x, datatype: FP32, dims: [1]}\n") +
              kMinimalOutputs),
      AllOf(StartsWith(kSource), HasSubstr("backend: must be a non-empty string")));
}

TEST(ModelConfigTest, RejectsMissingInputs) {
  EXPECT_THAT(ErrorOf(std::string("backend: torch\n") + kMinimalOutputs),
              AllOf(StartsWith(kSource), HasSubstr("inputs: is required")));
}

TEST(ModelConfigTest, RejectsMissingOutputs) {
  EXPECT_THAT(ErrorOf("backend: torch\ninputs:\n  - {name: x, datatype: FP32, dims: [1]}\n"),
              AllOf(StartsWith(kSource), HasSubstr("outputs: is required")));
}

TEST(ModelConfigTest, RejectsEmptyInputList) {
  EXPECT_THAT(ErrorOf(std::string("backend: torch\ninputs: []\n") + kMinimalOutputs),
              AllOf(StartsWith(kSource), HasSubstr("inputs: must be a non-empty list")));
}

TEST(ModelConfigTest, RejectsUnknownDatatypeAndListsTheKnownOnes) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP33, dims: [1]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].datatype: 'FP33' is not a datatype"),
                    HasSubstr("BOOL"), HasSubstr("FP32"), HasSubstr("BF16"), HasSubstr("UINT64")));
}

TEST(ModelConfigTest, RejectsZeroDimension) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [2, 0]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[1]"),
                    HasSubstr("must be a positive size or -1"), HasSubstr("got 0")));
}

TEST(ModelConfigTest, RejectsNegativeDimensionOtherThanMinusOne) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [-2]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[0]"), HasSubstr("got -2")));
}

TEST(ModelConfigTest, RejectsNonIntegerDimensions) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [abc]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[0]: must be an integer"),
                    HasSubstr("'abc'")));
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [4, 1.5]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims[1]: must be an integer"),
                    HasSubstr("'1.5'")));
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: 4}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims: must be a list of integers")));
}

// YAML integers with a leading zero: yaml-cpp's integer conversion auto-detects the base,
// so "010" would silently become 8 (and "08" is refused as "not an integer"). A config
// must mean what it says: 010 is either rejected or ten, never eight.
TEST(ModelConfigTest, DoesNotReadLeadingZeroIntegersAsOctal) {
  absl::StatusOr<ModelConfig> config =
      Parse(WithInputs("  - {name: x, datatype: FP32, dims: [010]}\n"));
  if (config.ok()) {
    EXPECT_THAT(config->inputs[0].dims, ElementsAre(10)) << "dims: [010] was read as octal";
  }
  config =
      Parse("max_batch_size: 010\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n"));
  if (config.ok()) {
    EXPECT_EQ(config->max_batch_size, 10) << "max_batch_size: 010 was read as octal";
  }
}

TEST(ModelConfigTest, RejectsDuplicateInputName) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n"
                                 "  - {name: x, datatype: INT64, dims: [1]}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[1].name: 'x' is declared twice")));
}

TEST(ModelConfigTest, RejectsUnknownKeyInsideInput) {
  EXPECT_THAT(
      ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1], shape: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("inputs[0].shape: unknown field"), HasSubstr("dims")));
}

TEST(ModelConfigTest, RejectsInputWithoutDims) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32}\n")),
              AllOf(StartsWith(kSource), HasSubstr("inputs[0].dims: is required")));
}

TEST(ModelConfigTest, RejectsNegativeMaxBatchSize) {
  EXPECT_THAT(
      ErrorOf("max_batch_size: -1\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("max_batch_size: must be 0"), HasSubstr("got -1")));
}

TEST(ModelConfigTest, RejectsNonIntegerMaxBatchSize) {
  EXPECT_THAT(
      ErrorOf("max_batch_size: lots\n" + WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n")),
      AllOf(StartsWith(kSource), HasSubstr("max_batch_size: must be an integer")));
}

TEST(ModelConfigTest, RejectsZeroInstanceCount) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
                      "instances:\n  - count: 0\n"),
              AllOf(StartsWith(kSource), HasSubstr("instances[0].count: must be 1..64, got 0")));
}

TEST(ModelConfigTest, RejectsDeviceNotAvailableInThisBuild) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
                      "instances:\n  - {count: 1, device: 'cuda:0'}\n"),
              AllOf(StartsWith(kSource), HasSubstr("instances[0].device: 'cuda:0'"),
                    HasSubstr("not available")));
}

TEST(ModelConfigTest, RejectsParametersThatAreNotAMapping) {
  EXPECT_THAT(
      ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "parameters: [a, b]\n"),
      AllOf(StartsWith(kSource), HasSubstr("parameters: must be a mapping")));
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") + "parameters: 5\n"),
              AllOf(StartsWith(kSource), HasSubstr("parameters: must be a mapping")));
}

TEST(ModelConfigTest, RejectsParameterWithNestedValue) {
  EXPECT_THAT(ErrorOf(WithInputs("  - {name: x, datatype: FP32, dims: [1]}\n") +
                      "parameters:\n  threads: [1, 2]\n"),
              AllOf(StartsWith(kSource), HasSubstr("parameters.threads: must be a single value")));
}

TEST(ModelConfigTest, RejectsInvalidYamlWithLineNumber) {
  EXPECT_THAT(ErrorOf("backend: torch\ninputs:\n  - {name: x, datatype: FP32, dims: [1]\n"),
              AllOf(StartsWith(std::string(kSource) + ": line "), HasSubstr("not valid YAML")));
  // The stray ']' is on line 3.
  EXPECT_THAT(ErrorOf("backend: torch\nmax_batch_size: 4\nparameters: {a: 1]\n"),
              AllOf(StartsWith(std::string(kSource) + ": line 3"), HasSubstr("not valid YAML")));
}

TEST(ModelConfigTest, RejectsEmptyFile) {
  EXPECT_THAT(ErrorOf(""), AllOf(StartsWith(kSource), HasSubstr("empty")));
  EXPECT_THAT(ErrorOf("# only a comment\n"), AllOf(StartsWith(kSource), HasSubstr("empty")));
}

TEST(ModelConfigTest, RejectsTopLevelThatIsNotAMapping) {
  EXPECT_THAT(ErrorOf("- backend\n- torch\n"),
              AllOf(StartsWith(kSource), HasSubstr("must be a mapping")));
}

}  // namespace
}  // namespace inferd
