#include "core/repository/settle_tracker.h"

namespace inferd {

bool SettleTracker::Observe(const std::string& key, const std::string& fingerprint, TimePoint now) {
  if (fingerprint.empty()) {
    seen_.erase(key);
    return false;
  }
  if (renamed_in_.count(key)) return true;
  auto [it, inserted] = seen_.try_emplace(key, Seen{fingerprint, now});
  if (!inserted && it->second.fingerprint != fingerprint) it->second = Seen{fingerprint, now};
  return now - it->second.since >= settle_interval_;
}

void SettleTracker::Forget(const std::string& key) {
  seen_.erase(key);
  renamed_in_.erase(key);
}

}  // namespace inferd
