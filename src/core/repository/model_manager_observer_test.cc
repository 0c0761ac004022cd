// ModelManager reports every load to its ModelObserverFactory, and the observer it creates
// for a version sees that version's executions: the hooks the Prometheus metrics hang on.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/mutex.h"
#include "core/repository/model_manager.h"
#include "core/scheduling/model_observer.h"
#include "core/testing/fake_backend.h"
#include "core/testing/temp_dir.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using testing::FakeBackend;
using testing::IdentityModel;
using testing::TempDir;
using testing::WriteFile;

class RecordingObserver : public ModelObserver {
 public:
  void OnBatchExecuted(int64_t rows, const BatchTimes&) override {
    MutexLock lock(&mu_);
    batches_.push_back(rows);
  }
  void OnRequestDequeued(Duration) override {
    MutexLock lock(&mu_);
    ++dequeued_;
  }
  void OnRequestFinished(absl::StatusCode, Duration) override {}

  std::vector<int64_t> batches() {
    MutexLock lock(&mu_);
    return batches_;
  }
  int dequeued() {
    MutexLock lock(&mu_);
    return dequeued_;
  }

 private:
  Mutex mu_;
  std::vector<int64_t> batches_ ABSL_GUARDED_BY(mu_);
  int dequeued_ ABSL_GUARDED_BY(mu_) = 0;
};

struct LoadEvent {
  std::string name;
  std::optional<int64_t> version;
  bool ok;
};

class RecordingFactory : public ModelObserverFactory {
 public:
  std::shared_ptr<ModelObserver> ForModel(std::string_view name, int64_t) override {
    auto observer = std::make_shared<RecordingObserver>();
    created[std::string(name)] = observer;
    return observer;
  }
  void OnModelLoadFinished(std::string_view name, std::optional<int64_t> version, Duration,
                           const absl::Status& status) override {
    loads.push_back({std::string(name), version, status.ok()});
  }

  std::map<std::string, std::shared_ptr<RecordingObserver>> created;  // by model name
  std::vector<LoadEvent> loads;
};

constexpr char kConfig[] = R"(
backend: fake
max_batch_size: 4
inputs:
  - {name: x, datatype: FP32, dims: [2]}
outputs:
  - {name: y, datatype: FP32, dims: [2]}
)";

TEST(ModelManagerObserverTest, ReportsLoadsAndObservesTheLoadedVersion) {
  TempDir repo("inferd_manager_observer");
  WriteFile(repo.path() / "good" / "config.yaml", kConfig);
  WriteFile(repo.path() / "good" / "2" / "model.fake", "weights");
  WriteFile(repo.path() / "missing_file" / "config.yaml", kConfig);
  WriteFile(repo.path() / "missing_file" / "1" / "other", "");
  WriteFile(repo.path() / "bad_config" / "config.yaml", "backend: [");

  RecordingFactory factory;
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<FakeBackend>(
      [](const BackendLoadRequest&) { return std::make_unique<IdentityModel>(); }));
  ModelManagerOptions options;
  options.observers = &factory;
  ModelManager manager(repo.path(), std::move(backends), options);
  ASSERT_TRUE(manager.LoadAll().ok());

  // Every version load is reported, failed ones too; a config that cannot be read is no
  // load (the index shows it UNAVAILABLE).
  std::map<std::string, LoadEvent> loads;
  for (const LoadEvent& load : factory.loads) loads[load.name] = load;
  ASSERT_EQ(loads.size(), 2u) << "loads: " << factory.loads.size();
  EXPECT_EQ(loads["good"].version, 2);
  EXPECT_TRUE(loads["good"].ok);
  EXPECT_EQ(loads["missing_file"].version, 1);
  EXPECT_FALSE(loads["missing_file"].ok);

  absl::StatusOr<ModelHandle> good = manager.Acquire("good");
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_TRUE(factory.created.contains("good"));
  RecordingObserver& observer = *factory.created["good"];
  EXPECT_EQ((*good)->observer(), &observer);

  auto request = std::make_unique<InferRequest>();
  request->inputs.push_back({"x", Tensor::Allocate(DataType::kFp32, {3, 2}).value()});
  absl::Notification done;
  request->on_complete = [&done](InferResponse response) {
    EXPECT_TRUE(response.status.ok()) << response.status;
    EXPECT_EQ(response.batch_size, 3);
    done.Notify();
  };
  (*good)->Infer(std::move(request));
  done.WaitForNotification();
  EXPECT_EQ(observer.batches(), std::vector<int64_t>{3});
  EXPECT_EQ(observer.dequeued(), 1);
}

TEST(ModelManagerObserverTest, WorksWithoutAFactory) {
  TempDir repo("inferd_manager_no_observer");
  WriteFile(repo.path() / "good" / "config.yaml", kConfig);
  WriteFile(repo.path() / "good" / "1" / "model.fake", "weights");
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<FakeBackend>(
      [](const BackendLoadRequest&) { return std::make_unique<IdentityModel>(); }));
  ModelManager manager(repo.path(), std::move(backends));
  ASSERT_TRUE(manager.LoadAll().ok());
  absl::StatusOr<ModelHandle> good = manager.Acquire("good");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ((*good)->observer(), nullptr);
}

}  // namespace
}  // namespace inferd
