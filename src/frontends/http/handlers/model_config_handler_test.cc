#include "frontends/http/handlers/model_config_handler.h"

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::WriteFile;

// Returns zeros of the first output's shape for every batch: enough for the warm-up.
class ZerosModel : public BackendModel {
 public:
  explicit ZerosModel(Shape row) : row_(std::move(row)) {}
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    Shape shape = row_;
    shape.insert(shape.begin(), inputs[0].shape()[0]);
    return std::vector<Tensor>{Tensor::Allocate(DataType::kFp32, shape).value()};
  }

 private:
  const Shape row_;
};

class ZerosBackend : public Backend {
 public:
  std::string_view name() const override { return "zeros"; }
  std::string_view platform() const override { return "zeros_platform"; }
  std::string_view model_filename() const override { return "model.zeros"; }
  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override {
    return std::make_unique<ZerosModel>(request.config->outputs[0].dims);
  }
};

class ModelConfigHandlerTest : public ::testing::Test {
 protected:
  void AddModel(const std::string& name, const std::string& yaml) {
    WriteFile(repo_.path() / name / "config.yaml", yaml);
    std::filesystem::create_directories(repo_.path() / name / "1");
  }
  void Start() {
    std::vector<std::unique_ptr<Backend>> backends;
    backends.push_back(std::make_unique<ZerosBackend>());
    models_ = std::make_unique<ModelManager>(repo_.path(), std::move(backends));
    ASSERT_TRUE(models_->LoadAll().ok());
    inference_ = std::make_unique<InferencePath>(models_.get());
    ctx_.inference = inference_.get();
    ctx_.models = models_.get();
  }
  HttpReply Config(std::string_view name, std::optional<int64_t> version = std::nullopt) {
    return HandleModelConfig(ctx_, ModelRef{name, version});
  }

  TempDir repo_{"inferd_model_config"};
  std::unique_ptr<ModelManager> models_;
  std::unique_ptr<InferencePath> inference_;
  HandlerContext ctx_;
};

TEST_F(ModelConfigHandlerTest, AnswersTritonsFieldNamesTypesAndDimsWithoutTheBatch) {
  AddModel("m", R"(
backend: zeros
max_batch_size: 8
inputs:
  - {name: ids, datatype: INT64, dims: [-1, 4]}
  - {name: text, datatype: BYTES, dims: [1]}
outputs:
  - {name: y, datatype: FP32, dims: [3]}
instances:
  - {count: 2, device: cpu}
parameters: {threads: "1"}
dynamic_batching: {enabled: false}
)");
  Start();
  const HttpReply reply = Config("m");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body,
            R"({"name":"m","platform":"zeros_platform","backend":"zeros","max_batch_size":8,)"
            R"("input":[{"name":"ids","data_type":"TYPE_INT64","format":"FORMAT_NONE",)"
            R"("dims":[-1,4],"is_shape_tensor":false,"allow_ragged_batch":false,)"
            R"("optional":false},{"name":"text","data_type":"TYPE_STRING",)"
            R"("format":"FORMAT_NONE","dims":[1],"is_shape_tensor":false,)"
            R"("allow_ragged_batch":false,"optional":false}],)"
            R"("output":[{"name":"y","data_type":"TYPE_FP32","dims":[3],)"
            R"("is_shape_tensor":false}],)"
            R"("instance_group":[{"name":"m_0","kind":"KIND_CPU","count":2,"gpus":[]}],)"
            R"("parameters":{"threads":{"string_value":"1"}}})");
  EXPECT_EQ(Config("m", 1).body, reply.body);
}

TEST_F(ModelConfigHandlerTest, ShowsDynamicBatchingInForce) {
  AddModel("b", R"(
backend: zeros
max_batch_size: 16
inputs: [{name: x, datatype: FP32, dims: [2]}]
outputs: [{name: y, datatype: FP32, dims: [2]}]
dynamic_batching: {max_queue_delay_us: 250, preferred_batch_sizes: [4, 16]}
queue: {priority_levels: 2}
)");
  Start();
  const HttpReply reply = Config("b");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_THAT(reply.body,
              HasSubstr(R"("dynamic_batching":{"preferred_batch_size":[4,16],)"
                        R"("max_queue_delay_microseconds":250,"preserve_ordering":false,)"
                        R"("priority_levels":2,"default_priority_level":2})"));
}

TEST_F(ModelConfigHandlerTest, LazyModelAnswersWithoutLoading) {
  AddModel("lazy", R"(
backend: zeros
max_batch_size: 4
load: lazy
inputs: [{name: x, datatype: FP16, dims: [2]}]
outputs: [{name: y, datatype: FP32, dims: [2]}]
)");
  Start();
  const HttpReply reply = Config("lazy");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_THAT(reply.body, HasSubstr(R"("data_type":"TYPE_FP16")"));
  EXPECT_FALSE(models_->Acquire("lazy").ok()) << "asking for the config loaded the model";
}

TEST_F(ModelConfigHandlerTest, UnknownModelOrVersionIsNotFound) {
  AddModel("m", R"(
backend: zeros
max_batch_size: 4
inputs: [{name: x, datatype: FP32, dims: [2]}]
outputs: [{name: y, datatype: FP32, dims: [2]}]
)");
  Start();
  EXPECT_EQ(Config("nope").status, 404u);
  const HttpReply old = Config("m", 7);
  EXPECT_EQ(old.status, 404u);
  EXPECT_THAT(old.body, HasSubstr("has no version 7 (served: 1)"));
}

}  // namespace
}  // namespace inferd
