#include "core/repository/repository_watcher.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using testing::TempDir;
using testing::WriteFile;

TEST(FolderFingerprintTest, EmptyFolderHasNoFingerprintAndWritesChangeIt) {
  TempDir dir("fingerprint");
  EXPECT_EQ(FolderFingerprint(dir.path()), "");
  WriteFile(dir.path() / "model.pt", "abc");
  const std::string first = FolderFingerprint(dir.path());
  EXPECT_THAT(first, ::testing::StartsWith("model.pt:3@"));
  WriteFile(dir.path() / "model.pt", "abcdef");
  EXPECT_NE(FolderFingerprint(dir.path()), first);
}

// Records the watcher's reports; a test waits for one without polling.
class Reports {
 public:
  void Add(const std::string& model, const std::vector<int64_t>& stable) {
    MutexLock lock(&mu_);
    last_[model] = stable;
    added_.NotifyAll();
  }
  std::map<std::string, std::vector<int64_t>> last() {
    MutexLock lock(&mu_);
    return last_;
  }
  // Waits up to 5 s for a report about `model`.
  bool WaitForReportOn(const std::string& model) {
    MutexLock lock(&mu_);
    return added_.WaitUntil(
        &mu_, std::chrono::steady_clock::now() + std::chrono::seconds(5),
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return last_.count(model) > 0; });
  }

 private:
  Mutex mu_;
  CondVar added_;
  std::map<std::string, std::vector<int64_t>> last_ ABSL_GUARDED_BY(mu_);
};

TEST(RepositoryWatcherTest, RenamedInVersionIsReportedAtOnceAndACopiedOneOnlyAfterSettling) {
  TempDir repo("watcher");
  WriteFile(repo.path() / "m" / "config.yaml", "backend: fake\n");
  WriteFile(repo.path() / "m" / "1" / "model.fake", "v1");
  Reports reports;
  RepositoryWatcher watcher(repo.path(),
                            {.poll_interval = std::chrono::milliseconds(10),
                             .settle_interval = std::chrono::hours(1),
                             .time = RealTime()},
                            [&](const std::string& model, const std::vector<int64_t>& stable) {
                              reports.Add(model, stable);
                            });
  // A folder being copied in place: never settles within an hour.
  WriteFile(repo.path() / "m" / "3" / "model.fake", "half");
  // A complete folder renamed into place: reported at once.
  WriteFile(repo.path() / "staging" / "model.fake", "v2");
  std::filesystem::rename(repo.path() / "staging", repo.path() / "m" / "2");
  ASSERT_TRUE(reports.WaitForReportOn("m"));
  EXPECT_THAT(reports.last().at("m"), ElementsAre(1, 2));
}

TEST(RepositoryWatcherTest, RemovedModelIsReportedWithNoVersions) {
  TempDir repo("watcher");
  WriteFile(repo.path() / "m" / "1" / "model.fake", "v1");
  Reports reports;
  RepositoryWatcher watcher(repo.path(),
                            {.poll_interval = std::chrono::milliseconds(10),
                             .settle_interval = std::chrono::milliseconds(10),
                             .time = RealTime()},
                            [&](const std::string& model, const std::vector<int64_t>& stable) {
                              reports.Add(model, stable);
                            });
  std::filesystem::remove_all(repo.path() / "m");
  ASSERT_TRUE(reports.WaitForReportOn("m"));
  EXPECT_TRUE(reports.last().at("m").empty());
}

}  // namespace
}  // namespace inferd
