#include "core/repository/model_loader.h"

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records the shapes it is given and returns preset outputs (or an error).
class PresetModel : public BackendModel {
 public:
  explicit PresetModel(absl::StatusOr<std::vector<Tensor>> outputs)
      : outputs_(std::move(outputs)) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    for (const Tensor& input : inputs) {
      input_shapes.push_back(input.shape());
      input_types.push_back(input.type());
    }
    return outputs_;
  }

  std::vector<Shape> input_shapes;
  std::vector<DataType> input_types;

 private:
  absl::StatusOr<std::vector<Tensor>> outputs_;
};

ModelConfig Config(int max_batch_size) {
  ModelConfig config;
  config.name = "m";
  config.backend = "fake";
  config.max_batch_size = max_batch_size;
  config.inputs = {{"a", DataType::kFp32, {-1, 3}}, {"b", DataType::kInt64, {2}}};
  config.outputs = {{"y", DataType::kFp32, {-1}}};
  config.instances = {InstanceGroup{}};
  return config;
}

Tensor Zeros(DataType type, Shape shape) {
  return Tensor::Allocate(type, std::move(shape)).value();
}

TEST(ModelLoaderTest, WarmUpRunsBatchOneWithVariableDimensionsOne) {
  const ModelConfig config = Config(/*max_batch_size=*/4);
  PresetModel model(std::vector<Tensor>{Zeros(DataType::kFp32, {1, 5})});
  ASSERT_TRUE(WarmUpAndCheckOutputs(config, model).ok());
  EXPECT_THAT(model.input_shapes, ElementsAre(ElementsAre(1, 1, 3), ElementsAre(1, 2)));
  EXPECT_THAT(model.input_types, ElementsAre(DataType::kFp32, DataType::kInt64));
}

TEST(ModelLoaderTest, WarmUpOfUnbatchedModelUsesTheDeclaredShape) {
  const ModelConfig config = Config(/*max_batch_size=*/0);
  PresetModel model(std::vector<Tensor>{Zeros(DataType::kFp32, {7})});
  ASSERT_TRUE(WarmUpAndCheckOutputs(config, model).ok());
  EXPECT_THAT(model.input_shapes, ElementsAre(ElementsAre(1, 3), ElementsAre(2)));
}

TEST(ModelLoaderTest, WarmUpRejectsOutputDatatypeMismatch) {
  const ModelConfig config = Config(4);
  PresetModel model(std::vector<Tensor>{Zeros(DataType::kFp64, {1, 5})});
  const absl::Status status = WarmUpAndCheckOutputs(config, model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("outputs[0].datatype"), HasSubstr("returns FP64 for output 'y'")));
}

TEST(ModelLoaderTest, WarmUpRejectsOutputShapeMismatch) {
  const ModelConfig config = Config(4);
  PresetModel model(std::vector<Tensor>{Zeros(DataType::kFp32, {1, 5, 1})});
  const absl::Status status = WarmUpAndCheckOutputs(config, model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("outputs[0].dims"), HasSubstr("[1,5,1]"), HasSubstr("[1,-1]")));
}

TEST(ModelLoaderTest, WarmUpRejectsOutputWithoutBatchOfOne) {
  const ModelConfig config = Config(4);
  PresetModel model(std::vector<Tensor>{Zeros(DataType::kFp32, {2, 5})});
  EXPECT_EQ(WarmUpAndCheckOutputs(config, model).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ModelLoaderTest, WarmUpFailureKeepsTheCodeAndSaysWhatRan) {
  const ModelConfig config = Config(4);
  PresetModel model(absl::InternalError("kernel exploded"));
  const absl::Status status = WarmUpAndCheckOutputs(config, model);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("warm-up run on zero inputs"), HasSubstr("kernel exploded")));
}

}  // namespace
}  // namespace inferd
