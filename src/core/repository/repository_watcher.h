// Watches a model repository (--model-control watch) and reports, per model folder, the
// version folders that are complete: inotify wakes it on changes and tells renamed-in
// (atomically published) folders apart; a periodic scan is the fallback when inotify is
// unavailable (network filesystems, exhausted watches) and catches anything missed.
//
// The callback runs on the watcher's thread with the model name and its settled versions
// whenever those versions, their files or config.yaml change (an empty list and a missing
// folder: the model was removed). The repository's state at start is the baseline.
// Thread-safety: construct and destroy from one thread; the destructor joins the thread.
#ifndef INFERD_CORE_REPOSITORY_REPOSITORY_WATCHER_H_
#define INFERD_CORE_REPOSITORY_REPOSITORY_WATCHER_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "core/repository/settle_tracker.h"

namespace inferd {

class RepositoryWatcher {
 public:
  struct Options {
    Duration poll_interval = std::chrono::seconds(1);
    Duration settle_interval = std::chrono::seconds(2);
    const TimeSource* time = RealTime();
  };
  using ChangeCallback =
      std::function<void(const std::string& model, const std::vector<int64_t>& stable)>;

  RepositoryWatcher(std::filesystem::path repository, Options options, ChangeCallback on_change);
  ~RepositoryWatcher();

 private:
  // What one model folder looked like at the last report.
  struct ModelView {
    std::string config;                     // config.yaml's size and mtime
    std::map<int64_t, std::string> stable;  // settled versions and their fingerprints
  };

  void Run();
  // Reads pending inotify events; true if there were any.
  bool DrainEvents();
  void WatchFolder(const std::filesystem::path& dir);
  // One pass over the repository; `baseline`: record without reporting.
  void Scan(bool baseline);

  const std::filesystem::path repository_;
  const Options options_;
  const ChangeCallback on_change_;
  SettleTracker settle_;
  std::map<std::string, ModelView> reported_;
  std::map<int, std::string> watch_dirs_;  // inotify watch descriptor -> model name ("" = root)
  int inotify_fd_ = -1;
  int stop_fd_ = -1;  // eventfd that wakes the thread for shutdown
  std::thread thread_;
};

// Names, sizes and modification times of every file under `dir`, sorted; empty when it has
// no files. Two equal fingerprints mean no file was written in between.
std::string FolderFingerprint(const std::filesystem::path& dir);

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_REPOSITORY_WATCHER_H_
