#include "core/repository/model_manager.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/testing/fake_backend.h"
#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using testing::FakeBackend;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::TempDir;
using testing::WriteFile;

constexpr char kFakeConfig[] = R"(
backend: fake
max_batch_size: 4
inputs:
  - {name: x, datatype: FP32, dims: [2]}
outputs:
  - {name: y, datatype: FP32, dims: [2]}
)";

class ModelManagerTest : public ::testing::Test {
 protected:
  // A manager over the temp repository with the fake backend (or none).
  std::unique_ptr<ModelManager> LoadRepository(bool with_fake_backend = true,
                                               ModelManagerOptions options = {}) {
    std::vector<std::unique_ptr<Backend>> backends;
    if (with_fake_backend) backends.push_back(std::make_unique<FakeBackend>());
    auto manager =
        std::make_unique<ModelManager>(repo_.path(), std::move(backends), std::move(options));
    const absl::Status loaded = manager->LoadAll();
    EXPECT_TRUE(loaded.ok()) << loaded;
    return manager;
  }

  // Adds model `name` with `config` and the given version folders (each with model.fake).
  void AddModel(const std::string& name, const std::string& config,
                const std::vector<std::string>& versions) {
    WriteFile(repo_.path() / name / "config.yaml", config);
    for (const std::string& version : versions) {
      WriteFile(repo_.path() / name / version / "model.fake", "weights");
    }
  }

  TempDir repo_{"inferd_model_manager"};
};

TEST_F(ModelManagerTest, EmptyRepositoryHasNoModels) {
  std::unique_ptr<ModelManager> manager = LoadRepository();
  EXPECT_THAT(manager->Index(), IsEmpty());
  EXPECT_THAT(manager->ReadyModelNames(), IsEmpty());
  EXPECT_EQ(manager->Acquire("m").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelManagerTest, MissingRepositoryIsAnError) {
  ModelManager manager(repo_.path() / "nope", {});
  const absl::Status status = manager.LoadAll();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("is not a readable folder"));
}

TEST_F(ModelManagerTest, ServesTheHighestVersion) {
  AddModel("double", kFakeConfig, {"1", "3", "2", "007"});
  std::unique_ptr<ModelManager> manager = LoadRepository();

  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].name, "double");
  EXPECT_EQ(index[0].version, 3);
  EXPECT_EQ(index[0].state, ModelState::kReady);
  EXPECT_EQ(index[0].reason, "");
  EXPECT_THAT(manager->ReadyModelNames(), ElementsAre("double"));

  absl::StatusOr<ModelHandle> handle = manager->Acquire("double");
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ((*handle)->version(), 3);
  EXPECT_EQ((*handle)->platform(), "fake_platform");
  EXPECT_EQ((*handle)->config().name, "double");
  EXPECT_TRUE(manager->Acquire("double", 3).ok());
}

TEST_F(ModelManagerTest, AcquireOfUnservedVersionIsNotFound) {
  AddModel("double", kFakeConfig, {"1", "2"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  absl::StatusOr<ModelHandle> handle = manager->Acquire("double", 1);
  EXPECT_EQ(handle.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(handle.status().message()),
              HasSubstr("model 'double' has no version 1 (served: 2)"));
}

TEST_F(ModelManagerTest, BrokenConfigMakesOnlyThatModelUnavailable) {
  AddModel("broken", "backend: fake\ninputs: [\n", {"1"});
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();

  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0].name, "broken");  // sorted by name
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_THAT(index[0].reason, AllOf(HasSubstr("broken/config.yaml"), HasSubstr("not valid YAML")));
  EXPECT_EQ(index[1].name, "double");
  EXPECT_EQ(index[1].state, ModelState::kReady);
  EXPECT_THAT(manager->ReadyModelNames(), ElementsAre("double"));

  absl::StatusOr<ModelHandle> broken = manager->Acquire("broken");
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(broken.status().message()),
              AllOf(HasSubstr("model 'broken' is unavailable"), HasSubstr("config.yaml")));
}

TEST_F(ModelManagerTest, BackendNotInThisBuildMakesModelUnavailable) {
  std::string config = kFakeConfig;
  config.replace(config.find("fake"), 4, "torch");
  AddModel("resnet", config, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository(/*with_fake_backend=*/false);

  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_THAT(index[0].reason, AllOf(HasSubstr("resnet/config.yaml: backend: 'torch'"),
                                     HasSubstr("not available in this build")));
}

TEST_F(ModelManagerTest, MissingConfigWithoutAModelFileMakesModelUnavailable) {
  std::filesystem::create_directories(repo_.path() / "noconfig" / "1");
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_THAT(index[0].reason, AllOf(HasSubstr("config.yaml"), HasSubstr("cannot be read")));
}

// Without config.yaml the backend is known from the model file's name; one that cannot read
// a signature from its files (the fake one) says what config.yaml must list.
TEST_F(ModelManagerTest, MissingConfigWithAModelFileNamesTheSignatureToAdd) {
  WriteFile(repo_.path() / "noconfig" / "1" / "model.fake", "weights");
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_THAT(index[0].reason,
              AllOf(HasSubstr("noconfig/config.yaml: inputs: is required: the 'fake' backend "
                              "cannot read the signature from model.fake")));
}

TEST_F(ModelManagerTest, ModelWithoutVersionFolderIsUnavailable) {
  AddModel("double", kFakeConfig, {});
  std::filesystem::create_directory(repo_.path() / "double" / "v1");
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_FALSE(index[0].version.has_value());
  EXPECT_THAT(index[0].reason, AllOf(HasSubstr("no version folder"), HasSubstr("1/model.fake")));
}

TEST_F(ModelManagerTest, BackendLoadErrorMakesModelUnavailable) {
  AddModel("double", kFakeConfig, {});
  std::filesystem::create_directories(repo_.path() / "double" / "1");  // no model.fake
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_EQ(index[0].version, 1);
  EXPECT_THAT(index[0].reason, HasSubstr("model.fake: missing"));
}

TEST_F(ModelManagerTest, WarmUpOutputMismatchNamesTheConfigField) {
  AddModel("double", std::string(kFakeConfig) + "parameters:\n  output_datatype: FP64\n", {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const std::vector<ModelStatus> index = manager->Index();
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, ModelState::kUnavailable);
  EXPECT_THAT(index[0].reason, AllOf(HasSubstr("double/config.yaml: outputs[0].datatype"),
                                     HasSubstr("returns FP64 for output 'y', not FP32")));
}

TEST_F(ModelManagerTest, SkipsHiddenFoldersAndFiles) {
  WriteFile(repo_.path() / ".git" / "config.yaml", "not a model");
  WriteFile(repo_.path() / "README.md", "notes");
  std::unique_ptr<ModelManager> manager = LoadRepository();
  EXPECT_THAT(manager->Index(), IsEmpty());
}

TEST_F(ModelManagerTest, ServedModelAnswersInferRequests) {
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  ModelHandle model = manager->Acquire("double").value();

  auto request = std::make_unique<InferRequest>();
  Tensor x = Tensor::Allocate(DataType::kFp32, {1, 2}).value();
  x.mutable_data_as<float>()[0] = 1.5f;
  x.mutable_data_as<float>()[1] = -2.0f;
  request->inputs.push_back({"x", x});
  absl::Notification done;
  InferResponse response;
  request->on_complete = [&](InferResponse r) {
    response = std::move(r);
    done.Notify();
  };
  model->Infer(std::move(request));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(response.status.ok()) << response.status;
  ASSERT_EQ(response.outputs.size(), 1u);
  EXPECT_EQ(response.outputs[0].tensor.data_as<float>()[0], 3.0f);
  EXPECT_EQ(response.outputs[0].tensor.data_as<float>()[1], -4.0f);
}

TEST_F(ModelManagerTest, ServedModelRejectsInvalidRequestThroughTheCallback) {
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  ModelHandle model = manager->Acquire("double").value();

  auto request = std::make_unique<InferRequest>();
  request->inputs.push_back({"x", Tensor::Allocate(DataType::kFp32, {1, 3}).value()});
  bool called = false;
  InferResponse response;
  request->on_complete = [&](InferResponse r) {
    response = std::move(r);
    called = true;
  };
  model->Infer(std::move(request));
  EXPECT_TRUE(called);  // refused on this thread, before queueing
  EXPECT_EQ(response.status.code(), absl::StatusCode::kInvalidArgument);
}

// Regression (issue 13, defect 3): the reload compared the new config with itself when
// looking for an engine to share, so a changed config kept the old engine (a torch model
// reloaded with `precision: bf16` kept serving fp32).
TEST_F(ModelManagerTest, ReloadAfterAnEngineConfigChangeLoadsANewEngine) {
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const int loads = FakeBackend::loads.load();
  ASSERT_TRUE(manager->Load("double").ok());
  EXPECT_EQ(FakeBackend::loads.load(), loads) << "an unchanged config shares the loaded engine";
  WriteFile(repo_.path() / "double" / "config.yaml",
            std::string(kFakeConfig) + "parameters: {note: changed}\n");
  ASSERT_TRUE(manager->Load("double").ok());
  EXPECT_EQ(FakeBackend::loads.load(), loads + 1) << "a changed parameter must load a new engine";
  ModelHandle model = manager->Acquire("double").value();
  EXPECT_EQ(model->config().parameters.at("note"), "changed");
}

TEST_F(ModelManagerTest, LoadRefusesNamesThatAreNotFolderNames) {
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  for (const std::string& name : std::vector<std::string>{"..", "../double", "double/1", ".hidden",
                                                          "a\nb", std::string(1000, 'd')}) {
    const absl::Status status = manager->Load(name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name << ": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("is not valid"));
  }
  const absl::Status missing = manager->Load("nothere");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), Not(HasSubstr(repo_.path().string())));
}

TEST_F(ModelManagerTest, CapsTheExecutionInstancesOfTheWholeProcess) {
  const std::string two = std::string(kFakeConfig) + "instances: [{count: 2}]\n";
  AddModel("a", two, {"1"});
  AddModel("b", two, {"1"});
  ModelManagerOptions options;
  options.max_total_instances = 3;
  std::unique_ptr<ModelManager> manager = LoadRepository(true, std::move(options));
  int ready = 0;
  std::string reason;
  for (const ModelStatus& status : manager->Index()) {
    if (status.state == ModelState::kReady) {
      ++ready;
    } else {
      reason = status.reason;
    }
  }
  EXPECT_EQ(ready, 1);
  EXPECT_THAT(reason, HasSubstr("over its limit of 3"));
}

TEST_F(ModelManagerTest, TimeoutsBeyondADayAreRefusedBeforeAnyArithmetic) {
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  absl::StatusCode code = absl::StatusCode::kOk;
  manager->AcquireForInference("double", std::nullopt, INT64_MAX,
                               [&](absl::StatusOr<ModelHandle> h) { code = h.status().code(); });
  EXPECT_EQ(code, absl::StatusCode::kInvalidArgument);
}

// Reading a model's folder (config.yaml, version folders) happens outside the lock that
// every request takes: a config.yaml that takes long to read (here a FIFO that nobody has
// written yet) must not stall requests for other models.
TEST_F(ModelManagerTest, ReadsAModelFolderWithoutHoldingTheLockRequestsTake) {
  AddModel("double", kFakeConfig, {"1"});
  std::unique_ptr<ModelManager> manager = LoadRepository();
  const std::filesystem::path fifo = repo_.path() / "piped" / "config.yaml";
  WriteFile(repo_.path() / "piped" / "1" / "model.fake", "weights");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);

  absl::Status loaded;
  std::thread loader([&] { loaded = manager->Load("piped"); });
  // Opening the FIFO for writing returns once the loader has opened it to read: from then on
  // the loader is inside the folder read, waiting for the text.
  const int writer = open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  absl::Notification answered;
  std::thread request([&] {
    EXPECT_TRUE(manager->Acquire("double").ok());
    answered.Notify();
  });
  EXPECT_TRUE(answered.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "a request waited for another model's config.yaml to be read";
  EXPECT_EQ(write(writer, kFakeConfig, sizeof(kFakeConfig) - 1),
            static_cast<ssize_t>(sizeof(kFakeConfig) - 1));
  close(writer);
  request.join();
  loader.join();
  EXPECT_TRUE(loaded.ok()) << loaded;
  EXPECT_TRUE(manager->Acquire("piped").ok());
}

}  // namespace
}  // namespace inferd
