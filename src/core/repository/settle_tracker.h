// Decides when a version folder that appeared in a watched repository is complete enough to
// load: at once when it was renamed into place (an atomic publish), otherwise only once its
// files (names, sizes, modification times) have stopped changing for a settle interval, so
// that a folder still being copied is never loaded.
//
// Pure: time comes from the caller, so the logic is tested without sleeping.
// Thread-safety: none; the watcher thread owns it.
#ifndef INFERD_CORE_REPOSITORY_SETTLE_TRACKER_H_
#define INFERD_CORE_REPOSITORY_SETTLE_TRACKER_H_

#include <map>
#include <string>

#include "common/clock.h"

namespace inferd {

class SettleTracker {
 public:
  explicit SettleTracker(Duration settle_interval) : settle_interval_(settle_interval) {}

  // Records `fingerprint` (empty: no files yet) for `key` at `now`. Returns true when the
  // key is stable: renamed into place, or unchanged for the settle interval. An empty folder
  // is never stable.
  bool Observe(const std::string& key, const std::string& fingerprint, TimePoint now);

  // `key` was renamed into place: complete as soon as it has files.
  void MarkRenamedIn(const std::string& key) { renamed_in_[key] = true; }

  // Stops tracking `key` (its folder is gone).
  void Forget(const std::string& key);

 private:
  struct Seen {
    std::string fingerprint;
    TimePoint since;
  };
  const Duration settle_interval_;
  std::map<std::string, Seen> seen_;
  std::map<std::string, bool> renamed_in_;
};

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_SETTLE_TRACKER_H_
