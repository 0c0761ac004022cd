#include "core/repository/model_loader.h"

#include <chrono>
#include <memory>
#include <optional>
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

// Returns zeros of shape [batch, 1]; fails from batch `fail_from` on, when set.
class ZerosModel : public BackendModel {
 public:
  explicit ZerosModel(int64_t fail_from) : fail_from_(fail_from) {}
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    const int64_t batch = inputs[0].shape()[0];
    if (fail_from_ > 0 && batch >= fail_from_) return absl::ResourceExhaustedError("no memory");
    return std::vector<Tensor>{Zeros(DataType::kFp32, {batch, 1})};
  }

 private:
  const int64_t fail_from_;
};

class ZerosBackend : public Backend {
 public:
  explicit ZerosBackend(int64_t fail_from = 0) : fail_from_(fail_from) {}
  std::string_view name() const override { return "fake"; }
  std::string_view platform() const override { return "fake_platform"; }
  std::string_view model_filename() const override { return "model.fake"; }
  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest&) override {
    return std::make_unique<ZerosModel>(fail_from_);
  }

 private:
  const int64_t fail_from_;
};

std::shared_ptr<ModelConfig> BatchingConfig() {
  auto config = std::make_shared<ModelConfig>();
  config->name = "m";
  config->backend = "fake";
  config->max_batch_size = 16;
  config->inputs = {{"x", DataType::kFp32, {4}}};
  config->outputs = {{"y", DataType::kFp32, {1}}};
  config->instances = {InstanceGroup{}};
  config->dynamic_batching.enabled = true;
  config->dynamic_batching.max_queue_delay_us = 300;
  config->dynamic_batching.preferred_batch_sizes = {4, 8};
  return config;
}

TEST(ModelLoaderTest, ServedModelBatchesAsTheConfigSays) {
  ZerosBackend backend;
  absl::StatusOr<std::unique_ptr<ServedModel>> served =
      LoadModelVersion(backend, BatchingConfig(), "/nonexistent/m", 1);
  ASSERT_TRUE(served.ok()) << served.status();
  const BatchPolicy& policy = (*served)->batch_policy();
  EXPECT_TRUE(policy.dynamic);
  EXPECT_EQ(policy.max_rows, 16);
  EXPECT_EQ(policy.max_queue_delay, std::chrono::microseconds(300));
  EXPECT_THAT(policy.preferred_batch_sizes, ElementsAre(4, 8));
  EXPECT_FALSE((*served)->tuning().has_value());
  EXPECT_EQ((*served)->stats().Snapshot().execution_count, 0u);  // warm-up is not counted
}

TEST(ModelLoaderTest, AutoTuneMeasuresAtLoadAndServesTheChosenSize) {
  ZerosBackend backend;
  std::shared_ptr<ModelConfig> config = BatchingConfig();
  config->dynamic_batching.auto_tune = true;
  config->dynamic_batching.latency_slo_ms = 10000;
  absl::StatusOr<std::unique_ptr<ServedModel>> served =
      LoadModelVersion(backend, config, "/nonexistent/m", 1);
  ASSERT_TRUE(served.ok()) << served.status();

  const std::optional<BatchTuning>& tuning = (*served)->tuning();
  ASSERT_TRUE(tuning.has_value());
  std::vector<int64_t> sizes;
  for (const BatchSizeMeasurement& m : tuning->table) sizes.push_back(m.batch_size);
  EXPECT_THAT(sizes, ElementsAre(1, 2, 4, 8, 16));
  EXPECT_GE(tuning->chosen, 1);
  EXPECT_LE(tuning->chosen, 16);
  const BatchPolicy& policy = (*served)->batch_policy();
  EXPECT_EQ(policy.max_rows, tuning->chosen);
  EXPECT_THAT(policy.preferred_batch_sizes, ElementsAre(tuning->chosen));
  EXPECT_EQ(policy.max_queue_delay, std::chrono::microseconds(300));
}

TEST(ModelLoaderTest, AutoTuneFailureFailsTheLoadNamingTheVersionFolder) {
  ZerosBackend backend(/*fail_from=*/4);
  std::shared_ptr<ModelConfig> config = BatchingConfig();
  config->dynamic_batching.auto_tune = true;
  absl::StatusOr<std::unique_ptr<ServedModel>> served =
      LoadModelVersion(backend, config, "/nonexistent/m", 3);
  EXPECT_EQ(served.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(served.status().message()),
              AllOf(HasSubstr("/nonexistent/m/3"), HasSubstr("batch size tuning failed"),
                    HasSubstr("no memory")));
}

}  // namespace
}  // namespace inferd
