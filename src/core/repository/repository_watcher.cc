#include "core/repository/repository_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "core/config/model_name.h"
#include "core/config/version_dirs.h"

namespace inferd {
namespace {

constexpr uint32_t kWatchMask =
    IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB;

std::string FileStamp(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return "";
  const auto mtime = std::filesystem::last_write_time(file, ec);
  if (ec) return "";
  return StrCat(size, "@", mtime.time_since_epoch().count());
}

}  // namespace

std::string FolderFingerprint(const std::filesystem::path& dir) {
  std::vector<std::string> entries;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    entries.push_back(StrCat(std::filesystem::relative(it->path(), dir, ec).string(), ":",
                             FileStamp(it->path())));
  }
  std::sort(entries.begin(), entries.end());
  return StrJoin(entries, ";");
}

RepositoryWatcher::RepositoryWatcher(std::filesystem::path repository, Options options,
                                     ChangeCallback on_change)
    : repository_(std::move(repository)),
      options_(options),
      on_change_(std::move(on_change)),
      settle_(options.settle_interval) {
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    spdlog::warn(
        "watch: inotify unavailable; scanning {} every {} ms", repository_.string(),
        std::chrono::duration_cast<std::chrono::milliseconds>(options_.poll_interval).count());
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  Scan(/*baseline=*/true);
  thread_ = std::thread([this] { Run(); });
}

RepositoryWatcher::~RepositoryWatcher() {
  const uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void RepositoryWatcher::WatchFolder(const std::filesystem::path& dir) {
  if (inotify_fd_ < 0) return;
  const int wd = inotify_add_watch(inotify_fd_, dir.c_str(), kWatchMask);
  if (wd >= 0) {
    watch_dirs_[wd] = dir == repository_ ? "" : dir.filename().string();
  }
}

bool RepositoryWatcher::DrainEvents() {
  if (inotify_fd_ < 0) return false;
  bool any = false;
  alignas(inotify_event) char buffer[16384];
  while (true) {
    const ssize_t got = read(inotify_fd_, buffer, sizeof(buffer));
    if (got <= 0) break;
    any = true;
    for (ssize_t offset = 0; offset < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->len == 0 || !(event->mask & IN_MOVED_TO) || !(event->mask & IN_ISDIR)) continue;
      auto dir = watch_dirs_.find(event->wd);
      if (dir == watch_dirs_.end()) continue;
      const std::string name = event->name;
      if (dir->second.empty()) {
        // A whole model folder renamed into the repository: all its versions are complete.
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(repository_ / name, ec)) {
          if (ParseVersionDirName(entry.path().filename().string())) {
            settle_.MarkRenamedIn(StrCat(name, "/", entry.path().filename().string()));
          }
        }
      } else if (ParseVersionDirName(name)) {
        settle_.MarkRenamedIn(StrCat(dir->second, "/", name));
      }
    }
  }
  return any;
}

void RepositoryWatcher::Scan(bool baseline) {
  const TimePoint now = options_.time->Now();
  std::map<std::string, ModelView> current;
  std::error_code ec;
  WatchFolder(repository_);
  for (const auto& model_dir : std::filesystem::directory_iterator(repository_, ec)) {
    const std::string name = model_dir.path().filename().string();
    if (name.starts_with(".") || !model_dir.is_directory(ec) || !ValidateModelName(name).ok()) {
      continue;
    }
    WatchFolder(model_dir.path());
    ModelView& view = current[name];
    view.config = FileStamp(model_dir.path() / "config.yaml");
    std::error_code inner;
    for (const auto& version_dir : std::filesystem::directory_iterator(model_dir.path(), inner)) {
      std::optional<int64_t> version = ParseVersionDirName(version_dir.path().filename().string());
      if (!version || !version_dir.is_directory(inner)) continue;
      const std::string key = StrCat(name, "/", *version);
      const std::string fingerprint = FolderFingerprint(version_dir.path());
      // At start everything present counts as complete: it was there before inferd.
      if (baseline && !fingerprint.empty()) settle_.MarkRenamedIn(key);
      if (settle_.Observe(key, fingerprint, now)) {
        view.stable[*version] = fingerprint;
      } else if (auto was = reported_.find(name);
                 was != reported_.end() && was->second.stable.count(*version)) {
        // Rewritten in place: the loaded version keeps serving; it is not reloaded.
        view.stable[*version] = was->second.stable.at(*version);
      }
    }
  }
  for (const auto& [name, view] : reported_) {
    if (current.count(name)) continue;
    for (const auto& [version, fingerprint] : view.stable)
      settle_.Forget(StrCat(name, "/", version));
    if (!baseline) on_change_(name, {});
  }
  for (const auto& [name, view] : current) {
    auto previous = reported_.find(name);
    const bool changed = previous == reported_.end() || previous->second.config != view.config ||
                         previous->second.stable != view.stable;
    if (!changed || baseline) continue;
    // Nothing settled yet in a new folder: wait rather than report a model without versions.
    if (view.stable.empty() && previous == reported_.end()) continue;
    std::vector<int64_t> versions;
    for (const auto& [version, fingerprint] : view.stable) versions.push_back(version);
    on_change_(name, versions);
  }
  // A new folder with nothing settled is not recorded, so that it is reported once it is.
  for (auto it = current.begin(); it != current.end();) {
    if (it->second.stable.empty() && !reported_.count(it->first)) {
      it = current.erase(it);
    } else {
      ++it;
    }
  }
  reported_ = std::move(current);
}

void RepositoryWatcher::Run() {
  // While something is settling, look again sooner than the poll interval.
  const auto poll_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.poll_interval).count());
  while (true) {
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    const int ready = poll(fds, inotify_fd_ >= 0 ? 2 : 1, std::max(poll_ms, 10));
    if (ready > 0 && (fds[0].revents & POLLIN)) return;
    DrainEvents();
    Scan(/*baseline=*/false);
  }
}

}  // namespace inferd
