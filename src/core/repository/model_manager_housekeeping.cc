// The model manager's housekeeping: the thread that answers requests whose wait for a load
// timed out and unloads idle versions, and what every path uses to stop serving a version
// (UnloadVersion, DropUnwanted) and to release the models it dropped.
#include <algorithm>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "common/timed_wait.h"
#include "core/memory/process_memory.h"
#include "core/repository/model_manager.h"

namespace inferd {

void ModelManager::HousekeepingLoop() {
  while (true) {
    {
      MutexLock lock(&mu_);
      // A pass every 50 ms of the time source (idle unloads and load timeouts are in its
      // terms), and at once when handles wait in the graveyard.
      WaitUntil(
          *options_.time, work_, &mu_, options_.time->Now() + std::chrono::milliseconds(50),
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !graveyard_.empty(); });
      if (stopping_) return;
    }
    Housekeep();
  }
}

void ModelManager::Housekeep() {
  Callbacks callbacks;
  std::vector<ModelHandle> dropped;
  {
    MutexLock lock(&mu_);
    bool unloaded = false;
    dropped.swap(graveyard_);
    const TimePoint now = options_.time->Now();
    for (auto& [name, entry] : models_) {
      const int64_t idle_s = entry.config ? entry.config->lifecycle.idle_unload_s : 0;
      for (auto& [version, v] : entry.versions) {
        // Requests waiting for a load past their timeout. Captured by copy under new names:
        // clang 14 cannot capture structured bindings.
        v.waiters.Expire(
            now,
            [model = std::string_view(name), number = version] {
              return StrCat("model '", model, "' version ", number,
                            " is still loading and the request's timeout has passed");
            },
            &callbacks);
        if (idle_s > 0 && v.state == ModelState::kReady && v.handle.use_count() == 1 &&
            v.handle->in_flight() == 0 &&
            now - v.usage->last_used() >= std::chrono::seconds(idle_s)) {
          unloaded = true;
          ++counters_.idle_unloads;
          v.evicted = true;
          UnloadVersion(name, version, v, ModelState::kUnloaded,
                        StrCat("idle for ", idle_s,
                               " s (idle_unload_s); loads again on its "
                               "next request"),
                        &dropped, &callbacks);
        }
      }
    }
    if (unloaded) PublishSnapshot();
  }
  for (auto& callback : callbacks) callback();
  Release(&dropped);
}

void ModelManager::UnloadVersion(const std::string& name, int64_t version, VersionEntry& v,
                                 ModelState state, const std::string& reason,
                                 std::vector<ModelHandle>* dropped, Callbacks* callbacks) {
  if (v.handle) dropped->push_back(std::move(v.handle));
  v.handle.reset();
  if (v.state != ModelState::kLoading) {
    v.state = state;
    v.reason = reason;
  }
  spdlog::info("model {} version {}: {}", name, version, reason);
  if (!v.waiters.empty()) {
    v.waiters.Fail(absl::StatusCode::kUnavailable, StrCat("model '", name, "': ", reason),
                   callbacks);
  }
}

void ModelManager::DropUnwanted(const std::string& name, ModelEntry& entry,
                                std::vector<ModelHandle>* dropped, Callbacks* callbacks) {
  for (auto it = entry.versions.begin(); it != entry.versions.end();) {
    const bool wanted = std::binary_search(entry.wanted.begin(), entry.wanted.end(), it->first);
    if (wanted || it->second.state == ModelState::kLoading) {
      ++it;
      continue;
    }
    if (it->second.state == ModelState::kReady) ++counters_.unloads;
    UnloadVersion(name, it->first, it->second, ModelState::kUnloaded,
                  "no longer served (version policy or folder removed)", dropped, callbacks);
    it = entry.versions.erase(it);
  }
  // Labels and weights must keep pointing at loaded versions.
  std::vector<int64_t> ready;
  for (const auto& [version, v] : entry.versions) {
    if (v.state == ModelState::kReady) ready.push_back(version);
  }
  if (!entry.traffic.labels.empty() || !entry.traffic.weights.empty()) {
    if (absl::Status valid = ValidateTrafficRules(entry.traffic, ready);
        !valid.ok() && !ready.empty()) {
      spdlog::warn(
          "model {}: traffic rules point at a version that is not loaded ({}); "
          "requests without a version go to the highest ready version",
          name, std::string(valid.message()));
    }
  }
}

void ModelManager::Release(std::vector<ModelHandle>* dropped) {
  if (dropped->empty()) return;
  // The last handle of a version finishes its queued requests and frees its weights here,
  // unless a request still holds it (then when that request ends).
  dropped->clear();
  ReleaseFreedMemory();
}

void ModelManager::ReleaseLater(std::vector<ModelHandle>* dropped) {
  if (dropped->empty()) return;
  MutexLock lock(&mu_);
  for (ModelHandle& handle : *dropped) graveyard_.push_back(std::move(handle));
  dropped->clear();
  work_.NotifyAll();
}

}  // namespace inferd
