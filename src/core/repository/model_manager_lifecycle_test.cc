// The model manager's lifecycle with a fake engine: version policies, lazy loading, the
// memory budget and LRU eviction, pinning, integrity, weight sharing, zero-downtime
// reloads and traffic rules.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/fake_time_source.h"
#include "common/mutex.h"
#include "core/repository/file_digest.h"
#include "core/repository/model_manager.h"
#include "core/testing/fake_backend.h"
#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::IdentityModel;
using testing::TempDir;
using testing::WriteFile;

// A version folder holds model.fake, loaded as an IdentityModel whose weights are the file
// (memory_bytes() is its size); a file starting with "corrupt" fails to load. Counts
// engine loads, so tests can tell a shared load from a new one.
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(int* loads) : loads_(loads) {}
  std::string_view name() const override { return "fake"; }
  std::string_view platform() const override { return "fake_platform"; }
  std::string_view model_filename() const override { return "model.fake"; }
  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override {
    const std::filesystem::path file = request.version_dir / model_filename();
    std::ifstream in(file);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && content.empty()) return absl::NotFoundError(file.string() + ": missing");
    if (content.starts_with("corrupt")) {
      return absl::InvalidArgumentError(file.string() + ": not a loadable model file");
    }
    ++*loads_;
    return std::make_unique<IdentityModel>(content.size());
  }

 private:
  int* const loads_;
};

// Notification over inferd::Mutex, so that this test also runs under ThreadSanitizer
// (Debian's Abseil is not instrumented; see scripts/tsan-tests).
class Notification {
 public:
  void Notify() {
    MutexLock lock(&mu_);
    done_ = true;
    cv_.NotifyAll();
  }
  bool WaitForNotificationWithTimeout(std::chrono::seconds timeout) {
    MutexLock lock(&mu_);
    return cv_.WaitUntil(&mu_, std::chrono::steady_clock::now() + timeout,
                         [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return done_; });
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

constexpr char kConfig[] = R"(backend: fake
max_batch_size: 4
inputs: [{name: x, datatype: FP32, dims: [2]}]
outputs: [{name: x, datatype: FP32, dims: [2]}]
)";

class ModelLifecycleTest : public ::testing::Test {
 protected:
  // Model `name` whose version folders hold `bytes` bytes of weights each (distinct
  // content per model and version unless `content` is given).
  void AddModel(const std::string& name, const std::vector<int>& versions, size_t bytes = 100,
                const std::string& extra_config = "", const std::string& content = "") {
    WriteFile(repo_.path() / name / "config.yaml", kConfig + extra_config);
    for (int version : versions) WriteVersion(name, version, bytes, content);
  }
  void WriteVersion(const std::string& name, int version, size_t bytes,
                    const std::string& content = "") {
    std::string weights = content.empty() ? name + std::to_string(version) : content;
    weights.resize(bytes, '.');
    WriteFile(repo_.path() / name / std::to_string(version) / "model.fake", weights);
  }

  void Start(ModelManagerOptions options = {}) {
    std::vector<std::unique_ptr<Backend>> backends;
    backends.push_back(std::make_unique<CountingBackend>(&engine_loads_));
    manager_ = std::make_unique<ModelManager>(repo_.path(), std::move(backends), options);
    ASSERT_TRUE(manager_->LoadAll().ok());
  }
  static ModelManagerOptions Budget(uint64_t cpu_bytes) {
    ModelManagerOptions options;
    options.memory_budgets["cpu"] = cpu_bytes;
    return options;
  }

  // Acquires for inference and waits for the answer.
  absl::StatusOr<ModelHandle> AcquireForInference(const std::string& name,
                                                  std::optional<int64_t> version = std::nullopt,
                                                  int64_t timeout_us = 0) {
    Notification done;
    absl::StatusOr<ModelHandle> result;
    manager_->AcquireForInference(name, version, timeout_us,
                                  [&](absl::StatusOr<ModelHandle> handle) {
                                    result = std::move(handle);
                                    done.Notify();
                                  });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(std::chrono::seconds(10)));
    return result;
  }

  ModelState StateOf(const std::string& name, int64_t version) {
    for (const ModelStatus& status : manager_->Index()) {
      if (status.name == name && status.version == version) return status.state;
    }
    ADD_FAILURE() << name << ":" << version << " is not in the index";
    return ModelState::kUnavailable;
  }
  std::string ReasonOf(const std::string& name, int64_t version) {
    for (const ModelStatus& status : manager_->Index()) {
      if (status.name == name && status.version == version) return status.reason;
    }
    return "";
  }

  TempDir repo_{"inferd_lifecycle"};
  FakeTimeSource time_;  // declared before the manager, which reads it
  int engine_loads_ = 0;
  std::unique_ptr<ModelManager> manager_;
};

TEST_F(ModelLifecycleTest, VersionPolicyLatestTwoServesBothAndDefaultsToTheHighest) {
  AddModel("m", {1, 2, 3}, 100, "version_policy: {latest: 2}\n");
  Start();
  EXPECT_EQ(StateOf("m", 2), ModelState::kReady);
  EXPECT_EQ(StateOf("m", 3), ModelState::kReady);
  EXPECT_EQ(manager_->Acquire("m").value()->version(), 3);
  EXPECT_EQ(AcquireForInference("m", 2).value()->version(), 2);
  EXPECT_EQ(AcquireForInference("m", 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(manager_->Describe("m")->served_versions, ElementsAre(2, 3));
}

TEST_F(ModelLifecycleTest, LazyModelLoadsOnItsFirstRequestOnce) {
  AddModel("lazy", {1}, 100, "load: lazy\n");
  Start();
  EXPECT_EQ(StateOf("lazy", 1), ModelState::kUnloaded);
  EXPECT_THAT(ReasonOf("lazy", 1), HasSubstr("lazy"));
  EXPECT_EQ(engine_loads_, 0);
  EXPECT_TRUE(manager_->Describe("lazy").ok()) << "metadata needs no load";

  // Several first requests, one load.
  std::vector<std::unique_ptr<Notification>> done;
  for (int i = 0; i < 5; ++i) {
    done.push_back(std::make_unique<Notification>());
    manager_->AcquireForInference("lazy", std::nullopt, 0,
                                  [n = done.back().get()](absl::StatusOr<ModelHandle> handle) {
                                    EXPECT_TRUE(handle.ok()) << handle.status();
                                    n->Notify();
                                  });
  }
  for (auto& n : done) ASSERT_TRUE(n->WaitForNotificationWithTimeout(std::chrono::seconds(10)));
  EXPECT_EQ(engine_loads_, 1);
  EXPECT_EQ(StateOf("lazy", 1), ModelState::kReady);
}

TEST_F(ModelLifecycleTest, LoadBeyondTheBudgetEvictsTheLeastRecentlyUsedIdleModel) {
  AddModel("a", {1}, 100, "load: lazy\n");
  AddModel("b", {1}, 100, "load: lazy\n");
  AddModel("c", {1}, 100, "load: lazy\n");
  Start(Budget(250));
  ASSERT_TRUE(AcquireForInference("a").ok());
  ASSERT_TRUE(AcquireForInference("b").ok());
  ASSERT_TRUE(AcquireForInference("a").ok());  // b is now the least recently used
  ASSERT_TRUE(AcquireForInference("c").ok());
  EXPECT_EQ(StateOf("a", 1), ModelState::kReady);
  EXPECT_EQ(StateOf("b", 1), ModelState::kUnloaded);
  EXPECT_THAT(ReasonOf("b", 1), HasSubstr("evicted to make room for c:1"));
  EXPECT_EQ(StateOf("c", 1), ModelState::kReady);

  // b loads again on its next request, evicting a (now the least recently used).
  ASSERT_TRUE(AcquireForInference("b").ok());
  EXPECT_EQ(StateOf("a", 1), ModelState::kUnloaded);
  const LifecycleReport report = manager_->Report();
  EXPECT_EQ(report.counters.evictions, 2u);
  EXPECT_EQ(report.counters.reloads, 1u);
  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_EQ(report.devices[0].budget_bytes, 250u);
  EXPECT_EQ(report.devices[0].used_bytes, 200u);
}

TEST_F(ModelLifecycleTest, PinnedAndBusyModelsAreNotEvictedAndTheLoadFailsClearly) {
  AddModel("pinned", {1}, 100, "pin: true\n");
  AddModel("busy", {1}, 100);
  AddModel("late", {1}, 100, "load: lazy\n");
  Start(Budget(250));
  ModelHandle held = manager_->Acquire("busy").value();  // a request holds it
  absl::StatusOr<ModelHandle> late = AcquireForInference("late");
  ASSERT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(late.status().message()), HasSubstr("memory budget"));
  EXPECT_THAT(std::string(late.status().message()), HasSubstr("pinned models hold 100 B"));
  EXPECT_EQ(StateOf("pinned", 1), ModelState::kReady);
  EXPECT_EQ(StateOf("busy", 1), ModelState::kReady);

  // Once the request is done, `busy` is idle and may make room.
  held.reset();
  ASSERT_TRUE(AcquireForInference("late").ok());
  EXPECT_EQ(StateOf("busy", 1), ModelState::kUnloaded);
  EXPECT_EQ(StateOf("pinned", 1), ModelState::kReady);
}

TEST_F(ModelLifecycleTest, ARequestPinsTheVersionItStartedOnAcrossAnEviction) {
  AddModel("a", {1}, 100, "load: lazy\n");
  AddModel("b", {1}, 100, "load: lazy\n");
  Start(Budget(150));
  ModelHandle a = AcquireForInference("a").value();
  ASSERT_EQ(AcquireForInference("b").status().code(), absl::StatusCode::kUnavailable)
      << "a is in use: it cannot be evicted";
  EXPECT_EQ(a->version(), 1);
  a.reset();
  ASSERT_TRUE(AcquireForInference("b").ok());
  EXPECT_EQ(StateOf("a", 1), ModelState::kUnloaded);
}

TEST_F(ModelLifecycleTest, ModelLargerThanTheWholeBudgetFailsWithTheReason) {
  AddModel("huge", {1}, 1000);
  Start(Budget(500));
  EXPECT_EQ(StateOf("huge", 1), ModelState::kUnloaded);
  EXPECT_THAT(ReasonOf("huge", 1), HasSubstr("more than the whole budget"));
}

TEST_F(ModelLifecycleTest, NewVersionIsServedOnlyOnceLoadedAndTheOldOneIsThenDropped) {
  AddModel("m", {1});
  Start();
  ModelHandle old = manager_->Acquire("m").value();
  WriteVersion("m", 2, 100);
  ASSERT_TRUE(manager_->Load("m").ok());
  EXPECT_EQ(manager_->Acquire("m").value()->version(), 2);
  EXPECT_EQ(manager_->Acquire("m", 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(old->version(), 1) << "a handle keeps its version alive";
}

TEST_F(ModelLifecycleTest, ResourcePreservingSwapFitsWhereAnAvailabilityPreservingOneCannot) {
  // A budget for one version: keeping the old one while the new one loads cannot fit.
  AddModel("keep", {1});
  AddModel("swap", {1}, 100, "version_swap: resource_preserving\npin: true\n");
  Start(Budget(250));
  WriteVersion("keep", 2, 100);
  WriteVersion("swap", 2, 100);
  const absl::Status keep = manager_->Load("keep");
  EXPECT_EQ(keep.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(keep.message()), HasSubstr("memory budget"));
  EXPECT_EQ(AcquireForInference("keep").value()->version(), 1) << "still serving";

  ASSERT_TRUE(manager_->Load("swap").ok());
  EXPECT_EQ(AcquireForInference("swap").value()->version(), 2);
  EXPECT_EQ(manager_->Acquire("swap", 1).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelLifecycleTest, FailedLoadOfANewVersionKeepsTheOldOneServing) {
  AddModel("m", {1});
  Start();
  WriteVersion("m", 2, 100, "corrupt");
  const absl::Status status = manager_->Load("m");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("not a loadable model file"));
  EXPECT_EQ(StateOf("m", 2), ModelState::kUnavailable);
  EXPECT_THAT(ReasonOf("m", 2), HasSubstr("2/model.fake"));
  EXPECT_EQ(AcquireForInference("m").value()->version(), 1);
}

TEST_F(ModelLifecycleTest, Sha256MismatchFailsTheLoadWithAMessageSayingSo) {
  AddModel("m", {1}, 100,
           "sha256: {1: 0000000000000000000000000000000000000000000000000000000000000000}\n");
  Start();
  EXPECT_EQ(StateOf("m", 1), ModelState::kUnavailable);
  EXPECT_THAT(ReasonOf("m", 1), HasSubstr("SHA-256 is"));
  EXPECT_THAT(ReasonOf("m", 1), HasSubstr("truncated, corrupt"));
}

TEST_F(ModelLifecycleTest, MatchingSha256Loads) {
  AddModel("m", {1});
  const std::string digest = Sha256OfFile(repo_.path() / "m" / "1" / "model.fake").value();
  WriteFile(repo_.path() / "m" / "config.yaml",
            std::string(kConfig) + "sha256: {1: " + digest + "}\n");
  Start();
  EXPECT_EQ(StateOf("m", 1), ModelState::kReady);
}

TEST_F(ModelLifecycleTest, IdenticalFilesShareOneEngineModelAndCountOnce) {
  AddModel("first", {1}, 100, "", "same weights");
  AddModel("second", {1}, 100, "", "same weights");
  Start(Budget(150));
  EXPECT_EQ(StateOf("first", 1), ModelState::kReady);
  EXPECT_EQ(StateOf("second", 1), ModelState::kReady);
  EXPECT_EQ(engine_loads_, 1);
  EXPECT_EQ(manager_->Acquire("first").value()->backend_model(),
            manager_->Acquire("second").value()->backend_model());
  EXPECT_EQ(manager_->Report().devices[0].used_bytes, 100u);
}

TEST_F(ModelLifecycleTest, ExplicitControlLoadsOnlyWhatItIsTold) {
  AddModel("a", {1});
  AddModel("b", {1});
  ModelManagerOptions options;
  options.control = ModelControl::kExplicit;
  options.load_models = {"a"};
  Start(options);
  EXPECT_EQ(StateOf("a", 1), ModelState::kReady);
  EXPECT_EQ(StateOf("b", 1), ModelState::kUnloaded);
  absl::StatusOr<ModelHandle> b = AcquireForInference("b");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("a repository load request loads it"));
  ASSERT_TRUE(manager_->Load("b").ok());
  EXPECT_EQ(StateOf("b", 1), ModelState::kReady);
  ASSERT_TRUE(manager_->Unload("a").ok());
  EXPECT_EQ(StateOf("a", 1), ModelState::kUnloaded);
  EXPECT_EQ(AcquireForInference("a").status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ModelLifecycleTest, LoadOfAnUnknownModelIsNotFound) {
  Start();
  EXPECT_EQ(manager_->Load("nope").code(), absl::StatusCode::kNotFound);
  // A path is not a model name: refused before it touches the filesystem.
  EXPECT_EQ(manager_->Load("../etc").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->Unload("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelLifecycleTest, TrafficRulesSplitByWeightAndOnlyPointAtLoadedVersions) {
  AddModel(
      "m", {1, 2}, 100,
      "version_policy: all\nlabels: {stable: 1, canary: 2}\ntraffic: {stable: 3, canary: 1}\n");
  Start();
  int canary = 0;
  for (int i = 0; i < 2000; ++i) canary += AcquireForInference("m").value()->version() == 2;
  EXPECT_NEAR(canary / 2000.0, 0.25, 0.04);
  EXPECT_EQ(manager_->ResolveLabel("m", "canary").value(), 2);

  TrafficRules blue_green;
  blue_green.labels = {{"live", 2}};
  blue_green.weights = {{"live", 1}};
  ASSERT_TRUE(manager_->SetTrafficRules("m", blue_green).ok());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(AcquireForInference("m").value()->version(), 2);

  TrafficRules bad;
  bad.labels = {{"next", 3}};
  const absl::Status status = manager_->SetTrafficRules("m", bad);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("not loaded"));
  EXPECT_EQ(manager_->GetTrafficRules("m").value(), blue_green) << "the rules in force stay";

  const LifecycleReport report = manager_->Report();
  uint64_t requests = 0;
  for (const VersionMemory& v : report.versions) requests += v.requests;
  EXPECT_EQ(requests, 2020u);
}

TEST_F(ModelLifecycleTest, IdleModelIsUnloadedAndReloadsOnItsNextRequest) {
  AddModel("m", {1}, 100, "idle_unload_s: 60\n");
  ModelManagerOptions options;
  options.time = &time_;
  Start(options);
  EXPECT_EQ(StateOf("m", 1), ModelState::kReady);
  // Passes run here on the fake clock (the housekeeping thread's own passes see the same
  // time): after 59 s one has run and left the model alone, after 60 s one unloads it.
  time_.Advance(std::chrono::seconds(59));
  manager_->Housekeep();
  EXPECT_EQ(StateOf("m", 1), ModelState::kReady);
  time_.Advance(std::chrono::seconds(1));
  manager_->Housekeep();
  EXPECT_EQ(StateOf("m", 1), ModelState::kUnloaded);
  EXPECT_THAT(ReasonOf("m", 1), HasSubstr("idle"));
  ASSERT_TRUE(AcquireForInference("m").ok());
  EXPECT_EQ(manager_->Report().counters.idle_unloads, 1u);
  EXPECT_EQ(manager_->Report().counters.reloads, 1u);
}

// Requests for a READY version read the serving snapshot without the manager's lock, so
// they race with unloads: each must get a version that stays alive while it holds it, or
// the answer the manager gives under its lock (here: not loaded), never a stopped model or
// a crash. Also run under ThreadSanitizer (scripts/tsan-tests).
TEST_F(ModelLifecycleTest, RequestsRacingUnloadsGetALiveVersionOrTheManagersAnswer) {
  AddModel("m", {1});
  Start();
  std::atomic<bool> stop{false};
  std::atomic<int> served{0};
  std::vector<std::thread> requests;
  for (int t = 0; t < 2; ++t) {
    requests.emplace_back([&] {
      while (!stop.load()) {
        absl::StatusOr<ModelHandle> handle = AcquireForInference("m");
        if (handle.ok()) {
          EXPECT_EQ((*handle)->version(), 1);
          EXPECT_EQ((*handle)->config().name, "m");
          ++served;
        } else {
          EXPECT_EQ(handle.status().code(), absl::StatusCode::kUnavailable) << handle.status();
        }
        EXPECT_TRUE(manager_->ConfigOf("m").ok());
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(manager_->Unload("m").ok());
    ASSERT_TRUE(manager_->Load("m").ok());
  }
  stop = true;
  for (std::thread& thread : requests) thread.join();
  EXPECT_GT(served.load(), 0);
  EXPECT_EQ(StateOf("m", 1), ModelState::kReady);
  EXPECT_TRUE(AcquireForInference("m").ok());
}

}  // namespace
}  // namespace inferd
