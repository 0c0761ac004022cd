// What the model manager reports about lifecycles and memory: the repository index rows,
// counters of loads, evictions and reloads, and memory in use against each device's budget.
// Plain values, copied out under the manager's lock, for stats, logs and metrics.
#ifndef INFERD_CORE_REPOSITORY_LIFECYCLE_REPORT_H_
#define INFERD_CORE_REPOSITORY_LIFECYCLE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferd {

// UNLOADED: known and loadable but not in memory now (lazy, evicted, idle, unloaded).
enum class ModelState { kLoading, kReady, kUnavailable, kUnloaded };
std::string_view ModelStateName(ModelState state);

// One row of the repository index.
struct ModelStatus {
  std::string name;
  std::optional<int64_t> version;  // absent when no version could be determined
  ModelState state = ModelState::kLoading;
  std::string reason;  // why the version is unavailable or unloaded; empty when ready
};

// Process-wide lifecycle counters since start.
struct LifecycleCounters {
  uint64_t loads = 0;          // successful loads (reloads included)
  uint64_t load_failures = 0;  // loads that failed (bad file, budget, ...)
  uint64_t evictions = 0;      // versions unloaded to make room for another
  uint64_t reloads = 0;        // loads of a version that had been evicted or idle-unloaded
  uint64_t idle_unloads = 0;   // versions unloaded by idle_unload_s
  uint64_t unloads = 0;        // versions unloaded by the API, a policy or a removed folder
};

struct DeviceMemory {
  std::string device;  // "cpu"
  uint64_t budget_bytes = 0;
  uint64_t used_bytes = 0;  // READY and LOADING versions, shared weights counted once
};

struct VersionMemory {
  std::string name;
  int64_t version = 0;
  std::string device;
  ModelState state = ModelState::kUnloaded;
  uint64_t memory_bytes = 0;      // weights counted against the budget (last load)
  uint64_t rss_growth_bytes = 0;  // resident memory growth observed during the last load
  bool shared_weights = false;    // another loaded version holds the same weights
  bool pinned = false;
  double last_load_ms = 0;
  uint64_t loads = 0, reloads = 0, evictions = 0;
  uint64_t requests = 0;  // inference requests routed to this version
  int64_t idle_ms = 0;    // since its last request (READY only)
};

struct LifecycleReport {
  LifecycleCounters counters;
  std::vector<DeviceMemory> devices;
  std::vector<VersionMemory> versions;
  uint64_t resident_bytes = 0;  // the process's RSS now
};

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_LIFECYCLE_REPORT_H_
