#include "core/service/inference_path.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/testing/fake_backend.h"
#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using testing::FakeBackend;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::TempDir;
using testing::WriteFile;

constexpr char kConfig[] = R"(
backend: fake
max_batch_size: 4
dynamic_batching: {max_queue_delay_us: 700}
inputs:
  - {name: x, datatype: FP32, dims: [2]}
outputs:
  - {name: y, datatype: FP32, dims: [2]}
)";

// What InferCallbacks reported for one request.
struct Outcome {
  absl::Notification done;
  bool acquired = false;
  std::optional<std::string> model;  // name:version of the model `done` was given
  InferResponse response;

  InferCallbacks Callbacks() {
    InferCallbacks callbacks;
    callbacks.acquired = [this](const ModelHandle& handle) { acquired = handle != nullptr; };
    callbacks.done = [this](const ServedModel* served, InferResponse answer) {
      if (served != nullptr) model = served->name() + ":" + std::to_string(served->version());
      response = std::move(answer);
      done.Notify();
    };
    return callbacks;
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(10)); }
};

std::unique_ptr<InferRequest> Request(std::vector<int64_t> shape, std::vector<float> values) {
  auto request = std::make_unique<InferRequest>();
  Tensor x = Tensor::Allocate(DataType::kFp32, std::move(shape)).value();
  for (size_t i = 0; i < values.size(); ++i) x.mutable_data_as<float>()[i] = values[i];
  request->inputs.push_back({"x", std::move(x)});
  return request;
}

class InferencePathTest : public ::testing::Test {
 protected:
  void AddModel(const std::string& name, const std::string& extra = "",
                const std::vector<int>& versions = {1}) {
    WriteFile(repo_.path() / name / "config.yaml", kConfig + extra);
    for (int version : versions) {
      WriteFile(repo_.path() / name / std::to_string(version) / "model.fake", "weights");
    }
  }
  void Start(std::string default_model = "") {
    std::vector<std::unique_ptr<Backend>> backends;
    backends.push_back(std::make_unique<FakeBackend>());
    models_ = std::make_unique<ModelManager>(repo_.path(), std::move(backends));
    ASSERT_TRUE(models_->LoadAll().ok());
    service_ = std::make_unique<InferencePath>(models_.get(), std::move(default_model));
  }
  ModelState StateOf(const std::string& name) {
    for (const ModelStatus& status : models_->Index()) {
      if (status.name == name) return status.state;
    }
    return ModelState::kUnavailable;
  }

  TempDir repo_{"inferd_inference_path"};
  std::unique_ptr<ModelManager> models_;
  std::unique_ptr<InferencePath> service_;
};

TEST_F(InferencePathTest, LoadsALazyModelAndAnswersWithTheVersionThatRanIt) {
  AddModel("lazy", "load: lazy\n");
  Start();
  ASSERT_EQ(StateOf("lazy"), ModelState::kUnloaded);
  Outcome outcome;
  service_->Submit("lazy", std::nullopt, Request({1, 2}, {1.5f, -2.0f}), outcome.Callbacks());
  ASSERT_TRUE(outcome.Wait());
  ASSERT_TRUE(outcome.response.status.ok()) << outcome.response.status;
  EXPECT_TRUE(outcome.acquired);
  EXPECT_EQ(outcome.model, "lazy:1");
  ASSERT_EQ(outcome.response.outputs.size(), 1u);
  const Tensor& y = outcome.response.outputs[0].tensor;
  EXPECT_EQ(y.data_as<float>()[0], 3.0f);
  EXPECT_EQ(y.data_as<float>()[1], -4.0f);
  EXPECT_EQ(StateOf("lazy"), ModelState::kReady);
}

TEST_F(InferencePathTest, UnknownModelIsAnsweredWithoutAModel) {
  Start();
  Outcome outcome;
  service_->Submit("nope", std::nullopt, Request({1, 2}, {1, 2}), outcome.Callbacks());
  ASSERT_TRUE(outcome.Wait());
  EXPECT_EQ(outcome.response.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(outcome.response.status.message(), HasSubstr("unknown model 'nope'"));
  EXPECT_FALSE(outcome.acquired);
  EXPECT_EQ(outcome.model, std::nullopt);
}

TEST_F(InferencePathTest, InvalidInputsAreRefusedByTheVersionTheyReached) {
  AddModel("m");
  Start();
  Outcome outcome;
  service_->Submit("m", std::nullopt, Request({1, 3}, {1, 2, 3}), outcome.Callbacks());
  ASSERT_TRUE(outcome.Wait());
  EXPECT_EQ(outcome.response.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(outcome.model, "m:1");
}

TEST_F(InferencePathTest, DescribesALazyModelWithoutLoadingIt) {
  AddModel("lazy", "load: lazy\nversion_policy: all\n", {1, 2});
  Start();
  absl::StatusOr<ModelDescription> description = service_->Describe("lazy", std::nullopt);
  ASSERT_TRUE(description.ok()) << description.status();
  EXPECT_EQ(description->config->name, "lazy");
  EXPECT_EQ(description->platform, "fake_platform");
  EXPECT_THAT(description->versions, ElementsAre(1, 2));
  EXPECT_THAT(description->ready_versions, IsEmpty());
  // From the config, as the version would get it once loaded.
  EXPECT_TRUE(description->batch_policy.dynamic);
  EXPECT_EQ(description->batch_policy.max_queue_delay, std::chrono::microseconds(700));
  EXPECT_EQ(StateOf("lazy"), ModelState::kUnloaded);
}

TEST_F(InferencePathTest, DescribeRefusesAVersionThePolicyDoesNotServe) {
  AddModel("m", "", {1, 2});  // latest 1: only version 2 is served
  Start();
  EXPECT_TRUE(service_->Describe("m", 2).ok());
  absl::StatusOr<ModelDescription> old = service_->Describe("m", 1);
  EXPECT_EQ(old.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(old.status().message(), HasSubstr("model 'm' has no version 1 (served: 2)"));
  EXPECT_EQ(service_->Describe("nope", std::nullopt).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(InferencePathTest, DefaultModelIsTheConfiguredOneElseTheOnlyServableOne) {
  AddModel("only");
  Start();
  EXPECT_EQ(service_->DefaultModel().value(), "only");
  AddModel("second", "load: lazy\n");  // lazy models can be served too
  Start();
  absl::StatusOr<std::string> none = service_->DefaultModel();
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("ready models: only, second"));
  Start("second");
  EXPECT_EQ(service_->DefaultModel().value(), "second");
}

}  // namespace
}  // namespace inferd
