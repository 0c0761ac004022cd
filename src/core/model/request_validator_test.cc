#include "core/model/request_validator.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// inputs a: FP32 [-1, 3], b: INT64 [2]; output y, z; batches of up to 4.
ModelConfig TwoInputConfig(int max_batch_size = 4) {
  ModelConfig config;
  config.name = "m";
  config.backend = "fake";
  config.max_batch_size = max_batch_size;
  config.inputs = {{"a", DataType::kFp32, {-1, 3}}, {"b", DataType::kInt64, {2}}};
  config.outputs = {{"y", DataType::kFp32, {1}}, {"z", DataType::kFp32, {1}}};
  config.instances = {InstanceGroup{}};
  return config;
}

NamedTensor Input(std::string name, DataType type, Shape shape) {
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(type, std::move(shape));
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return {std::move(name), *std::move(tensor)};
}

// The error message of validating `request`, which must fail with InvalidArgument.
std::string ErrorOf(const ModelConfig& config, InferRequest& request) {
  const absl::Status status = ValidateAndOrderInputs(config, request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

TEST(RequestValidatorTest, ReordersInputsToConfigOrder) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("b", DataType::kInt64, {2, 2}));
  request.inputs.push_back(Input("a", DataType::kFp32, {2, 5, 3}));

  ASSERT_TRUE(ValidateAndOrderInputs(config, request).ok());

  ASSERT_EQ(request.inputs.size(), 2u);
  EXPECT_EQ(request.inputs[0].name, "a");
  EXPECT_THAT(request.inputs[0].tensor.shape(), ElementsAre(2, 5, 3));
  EXPECT_EQ(request.inputs[1].name, "b");
  EXPECT_THAT(request.inputs[1].tensor.shape(), ElementsAre(2, 2));
}

TEST(RequestValidatorTest, RejectsMissingInput) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  EXPECT_THAT(ErrorOf(config, request),
              AllOf(HasSubstr("missing input 'b'"), HasSubstr("'a', 'b'")));
}

TEST(RequestValidatorTest, RejectsUnknownInput) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  request.inputs.push_back(Input("c", DataType::kFp32, {1}));
  EXPECT_THAT(ErrorOf(config, request),
              AllOf(HasSubstr("unknown input 'c'"), HasSubstr("model 'm' takes 'a', 'b'")));
}

TEST(RequestValidatorTest, RejectsDuplicateInput) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  EXPECT_THAT(ErrorOf(config, request), HasSubstr("input 'a' is given twice"));
}

TEST(RequestValidatorTest, RejectsDatatypeMismatch) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp64, {1, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  EXPECT_THAT(ErrorOf(config, request),
              AllOf(HasSubstr("input 'a'"), HasSubstr("datatype FP64"), HasSubstr("FP32")));
}

TEST(RequestValidatorTest, RejectsWrongRank) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  EXPECT_THAT(ErrorOf(config, request),
              AllOf(HasSubstr("input 'a'"), HasSubstr("[1,3]"), HasSubstr("[-1,-1,3]"),
                    HasSubstr("expected 3 dimensions, got 2")));
}

TEST(RequestValidatorTest, RejectsFixedDimensionMismatch) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 4}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  EXPECT_THAT(ErrorOf(config, request),
              AllOf(HasSubstr("input 'a'"), HasSubstr("dimension 2 must be 3")));
}

TEST(RequestValidatorTest, VariableDimensionAcceptsAnySize) {
  const ModelConfig config = TwoInputConfig();
  for (int64_t size : {0, 1, 7, 1000}) {
    InferRequest request;
    request.inputs.push_back(Input("a", DataType::kFp32, {1, size, 3}));
    request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
    EXPECT_TRUE(ValidateAndOrderInputs(config, request).ok()) << "size " << size;
  }
}

TEST(RequestValidatorTest, RejectsBatchOfZero) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {0, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {0, 2}));
  EXPECT_THAT(ErrorOf(config, request), HasSubstr("the batch size must be at least 1"));
}

TEST(RequestValidatorTest, AcceptsBatchOfExactlyMaxBatchSize) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {4, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {4, 2}));
  EXPECT_TRUE(ValidateAndOrderInputs(config, request).ok());
}

TEST(RequestValidatorTest, RejectsBatchAboveMaxBatchSize) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {5, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {5, 2}));
  EXPECT_THAT(ErrorOf(config, request), HasSubstr("the batch size 5 exceeds max_batch_size 4"));
}

TEST(RequestValidatorTest, RejectsInputsDisagreeingOnBatchSize) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {2, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {3, 2}));
  EXPECT_THAT(ErrorOf(config, request), AllOf(HasSubstr("disagree on the batch size"),
                                              HasSubstr("'a' has 2"), HasSubstr("'b' has 3")));
}

TEST(RequestValidatorTest, AcceptsKnownRequestedOutputs) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  request.requested_outputs = {"z"};
  EXPECT_TRUE(ValidateAndOrderInputs(config, request).ok());
}

TEST(RequestValidatorTest, RejectsUnknownRequestedOutput) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  request.requested_outputs = {"y", "w"};
  EXPECT_THAT(ErrorOf(config, request),
              AllOf(HasSubstr("unknown requested output 'w'"), HasSubstr("'y', 'z'")));
}

TEST(RequestValidatorTest, RejectsOutputRequestedTwice) {
  const ModelConfig config = TwoInputConfig();
  InferRequest request;
  request.inputs.push_back(Input("a", DataType::kFp32, {1, 1, 3}));
  request.inputs.push_back(Input("b", DataType::kInt64, {1, 2}));
  request.requested_outputs = {"y", "y"};
  EXPECT_THAT(ErrorOf(config, request), HasSubstr("output 'y' is requested twice"));
}

TEST(RequestValidatorTest, UnbatchedConfigTakesTheDeclaredShapeExactly) {
  const ModelConfig config = TwoInputConfig(/*max_batch_size=*/0);
  {
    // No batch dimension: [-1, 3] and [2] as declared; any size for -1, even beyond a batch.
    InferRequest request;
    request.inputs.push_back(Input("a", DataType::kFp32, {9, 3}));
    request.inputs.push_back(Input("b", DataType::kInt64, {2}));
    EXPECT_TRUE(ValidateAndOrderInputs(config, request).ok());
  }
  {
    // The first dimensions differ, which is fine without a batch dimension.
    InferRequest request;
    request.inputs.push_back(Input("a", DataType::kFp32, {0, 3}));
    request.inputs.push_back(Input("b", DataType::kInt64, {2}));
    EXPECT_TRUE(ValidateAndOrderInputs(config, request).ok());
  }
  {
    // A batch dimension added by the client is a rank error.
    InferRequest request;
    request.inputs.push_back(Input("a", DataType::kFp32, {1, 9, 3}));
    request.inputs.push_back(Input("b", DataType::kInt64, {2}));
    EXPECT_THAT(ErrorOf(config, request), AllOf(HasSubstr("expected 2 dimensions, got 3"),
                                                ::testing::Not(HasSubstr("first = batch"))));
  }
  {
    InferRequest request;
    request.inputs.push_back(Input("a", DataType::kFp32, {9, 3}));
    request.inputs.push_back(Input("b", DataType::kInt64, {3}));
    EXPECT_THAT(ErrorOf(config, request), HasSubstr("dimension 0 must be 2"));
  }
}

TEST(RequestValidatorTest, CheckShapeRejectsNegativeDimension) {
  const ModelConfig config = TwoInputConfig();
  EXPECT_THAT(std::string(CheckShape(config, config.inputs[0], {1, -3, 3}).message()),
              HasSubstr("dimension 1 is negative"));
}

}  // namespace
}  // namespace inferd
