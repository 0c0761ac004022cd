#include "backends/torch/torch_backend.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/script.h>

#include "common/cores.h"
#include "core/config/model_config.h"
#include "core/types/tensor.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

namespace fs = std::filesystem;

// A one-line TorchScript model saved as <dir>/<name>/1/model.pt, with its config.
struct SavedModel {
  ModelConfig config;
  fs::path version_dir;
};

SavedModel SaveDoubler(const fs::path& dir, const std::string& name,
                       const std::string& parameters) {
  torch::jit::Module module("Doubler");
  module.define("def forward(self, x):\n  return x * 2\n");
  const fs::path version_dir = dir / name / "1";
  fs::create_directories(version_dir);
  module.save((version_dir / "model.pt").string());
  absl::StatusOr<ModelConfig> config = ParseModelConfig(
      "backend: torch\nmax_batch_size: 8\n"
      "inputs: [{name: x, datatype: FP32, dims: [4]}]\n"
      "outputs: [{name: y, datatype: FP32, dims: [4]}]\n"
      "parameters: " +
          parameters + "\n",
      name, "config.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return {*config, version_dir};
}

// Runs `model` once on the calling thread and returns its intra-op count afterwards.
int ThreadsAfterExecuteOnThisThread(BackendModel& model) {
  absl::StatusOr<Tensor> input = Tensor::Allocate(DataType::kFp32, {1, 4});
  EXPECT_TRUE(input.ok());
  std::vector<Tensor> inputs;
  inputs.push_back(*std::move(input));
  absl::StatusOr<std::vector<Tensor>> outputs = model.Execute(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  return at::get_num_threads();
}

// Runs `model` once on a new thread and returns that thread's intra-op count afterwards.
int ThreadsAfterExecuteOnAFreshThread(BackendModel& model) {
  int threads = 0;
  std::thread([&] { threads = ThreadsAfterExecuteOnThisThread(model); }).join();
  return threads;
}

TEST(TorchBackendTest, EachModelRunsWithItsOwnIntraOpThreadCount) {
  const fs::path dir = fs::path(::testing::TempDir()) / "torch_backend_threads";
  fs::remove_all(dir);
  const SavedModel single = SaveDoubler(dir, "single", "{intra_op_threads: 1}");
  const SavedModel wide = SaveDoubler(dir, "wide", "{intra_op_threads: 3}");
  const SavedModel plain = SaveDoubler(dir, "plain", "{}");
  TorchBackend backend(TorchBackendOptions{.intra_op_threads = 2});

  std::vector<std::unique_ptr<BackendModel>> models;
  for (const SavedModel* saved : {&single, &wide, &plain}) {
    absl::StatusOr<std::unique_ptr<BackendModel>> model = backend.Load(
        BackendLoadRequest{.config = &saved->config, .version_dir = saved->version_dir});
    ASSERT_TRUE(model.ok()) << model.status();
    models.push_back(*std::move(model));
  }
  // Each on a thread of its own, as execution instances are; a model's count must not leak
  // into the next thread (LibTorch starts new threads from the last count set anywhere).
  EXPECT_EQ(ThreadsAfterExecuteOnAFreshThread(*models[0]), 1);
  EXPECT_EQ(ThreadsAfterExecuteOnAFreshThread(*models[1]), 3);
  EXPECT_EQ(ThreadsAfterExecuteOnAFreshThread(*models[2]), 2);
  EXPECT_EQ(backend.intra_op_threads(), 2);
  fs::remove_all(dir);
}

// A model told to adapt (the load probe kept several threads) times its own runs and tries
// each candidate count first: the backend's count (every core), half of it, ... one
// (common/adaptive_threads.h); one whose count the config fixed never moves.
TEST(TorchBackendTest, AnAdaptingModelTriesEachCountAndAFixedOneNeverMoves) {
  const fs::path dir = fs::path(::testing::TempDir()) / "torch_backend_adapt";
  fs::remove_all(dir);
  const SavedModel plain = SaveDoubler(dir, "plain", "{}");
  const SavedModel fixed = SaveDoubler(dir, "fixed", "{intra_op_threads: 3}");
  TorchBackend backend(TorchBackendOptions{});  // every core, left open
  std::vector<std::unique_ptr<BackendModel>> models;
  for (const SavedModel* saved : {&plain, &fixed}) {
    absl::StatusOr<std::unique_ptr<BackendModel>> model = backend.Load(
        BackendLoadRequest{.config = &saved->config, .version_dir = saved->version_dir});
    ASSERT_TRUE(model.ok()) << model.status();
    (*model)->AdaptIntraOpThreads();
    models.push_back(*std::move(model));
  }
  std::vector<int> candidates;  // every core, half, ..., one (one core: nothing to adapt)
  for (int threads = CoresAvailable(); threads >= 1; threads /= 2) candidates.push_back(threads);
  std::vector<int> used, used_fixed;
  std::thread([&] {
    for (size_t i = 0; i < candidates.size(); ++i) {
      used.push_back(ThreadsAfterExecuteOnThisThread(*models[0]));
      EXPECT_EQ(models[0]->intra_op_threads(), used.back());
      used_fixed.push_back(ThreadsAfterExecuteOnThisThread(*models[1]));
    }
  }).join();
  EXPECT_EQ(used, candidates);
  EXPECT_EQ(used_fixed, std::vector<int>(candidates.size(), 3));
  fs::remove_all(dir);
}

size_t ProcessThreads() {
  size_t threads = 0;
  for ([[maybe_unused]] const auto& task : fs::directory_iterator("/proc/self/task")) ++threads;
  return threads;
}

// LibTorch's intra-op threads are the calling thread's OpenMP team; a thread that will not
// run the model for a while ends it (common/openmp_team.h), and the next run starts it again.
TEST(TorchBackendTest, ReleaseCallerThreadsEndsTheCallingThreadsTeam) {
  const fs::path dir = fs::path(::testing::TempDir()) / "torch_backend_release";
  fs::remove_all(dir);
  const SavedModel saved = SaveDoubler(dir, "wide", "{intra_op_threads: 3}");
  TorchBackend backend(TorchBackendOptions{});
  absl::StatusOr<std::unique_ptr<BackendModel>> model =
      backend.Load(BackendLoadRequest{.config = &saved.config, .version_dir = saved.version_dir});
  ASSERT_TRUE(model.ok()) << model.status();

  size_t with_team = 0, released = 0, again = 0;
  std::thread([&] {
    auto run_with_team = [&] {
      ASSERT_EQ(ThreadsAfterExecuteOnThisThread(**model), 3);
      // An element-wise op large enough for LibTorch to split (its own OpenMP code: a region
      // compiled here would not be parallel): the team of 3 starts, 2 workers beside this one.
      at::Tensor product = at::ones({1 << 22}) * 2;
    };
    run_with_team();
    with_team = ProcessThreads();
    (*model)->ReleaseCallerThreads();
    // The workers leave the team before this returns and exit just after: wait for that.
    for (int i = 0; i < 500 && ProcessThreads() > with_team - 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    released = ProcessThreads();
    run_with_team();
    again = ProcessThreads();
  }).join();
  EXPECT_EQ(with_team - released, 2u) << "the team's two workers should have exited";
  EXPECT_EQ(again, with_team) << "the next run starts the team again";
  fs::remove_all(dir);
}

TEST(TorchBackendTest, IntraOpThreadsMustBeAPositiveCount) {
  const fs::path dir = fs::path(::testing::TempDir()) / "torch_backend_bad_threads";
  fs::remove_all(dir);
  TorchBackend backend(TorchBackendOptions{.intra_op_threads = 2});
  for (const std::string value : {"0", "two", "-1", "1.5"}) {
    const SavedModel saved = SaveDoubler(dir, "m", "{intra_op_threads: " + value + "}");
    absl::StatusOr<std::unique_ptr<BackendModel>> model =
        backend.Load(BackendLoadRequest{.config = &saved.config, .version_dir = saved.version_dir});
    ASSERT_FALSE(model.ok()) << value;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(model.status().message())
                  .find("parameters.intra_op_threads: must be a thread count in 1..1024, got '" +
                        value + "'"),
              std::string::npos)
        << model.status();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace inferd
