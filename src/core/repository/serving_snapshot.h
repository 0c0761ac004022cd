// What requests read without the model manager's lock: an immutable snapshot of every
// model's config, traffic rules and READY versions (TF Serving's serving map). The manager
// builds a new snapshot whenever what serves changes, before it releases its lock, and
// swaps it in; a request copies the current shared_ptr under a mutex held only for that copy
// and then reads it with no lock at all. Whatever a snapshot cannot answer (a model that is
// not loaded, an error to explain) the manager answers under its lock, as before.
//
// A snapshot names versions through weak references. A request pins the version it gets by
// locking one into a ModelHandle; a version dropped since the snapshot was made fails the
// lock and the request takes the manager's path. A request that locks a version just before
// it is unloaded or evicted keeps it alive until it ends, as a request that acquired it just
// before did already. Dropping the last reference to a snapshot never releases a model: that
// would finish its queued requests on whichever thread (an I/O thread) let the snapshot go.
//
// Thread-safety: a ServingSnapshot is immutable once published; VersionUsage is atomic.
#ifndef INFERD_CORE_REPOSITORY_SERVING_SNAPSHOT_H_
#define INFERD_CORE_REPOSITORY_SERVING_SNAPSHOT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "core/config/model_config.h"
#include "core/config/traffic_rules.h"
#include "core/model/served_model.h"

namespace inferd {

// A version's request counter and last use, which requests update without the manager's
// lock. The manager's entry for the version and every snapshot naming it share one, so the
// counts outlive snapshots and the LRU eviction and idle unloads read what requests wrote.
class VersionUsage {
 public:
  // A request was routed to the version at `now`.
  void RecordRequest(TimePoint now) {
    requests_.fetch_add(1, std::memory_order_relaxed);
    Touch(now);
  }
  // The version was used (or loaded) at `now`; last_used() never moves back.
  void Touch(TimePoint now);
  TimePoint last_used() const {
    return TimePoint(Duration(last_used_.load(std::memory_order_relaxed)));
  }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

 private:
  std::atomic<Duration::rep> last_used_{TimePoint{}.time_since_epoch().count()};
  std::atomic<uint64_t> requests_{0};
};

struct ServingVersion {
  int64_t version = 0;
  std::weak_ptr<ServedModel> model;
  std::shared_ptr<VersionUsage> usage;
};

struct ServingModel {
  std::shared_ptr<const ModelConfig> config;  // null when none could be read yet
  bool config_ok = false;                     // false: the model cannot be served...
  std::string unavailable;                    // ...and why
  TrafficRules traffic;
  std::vector<ServingVersion> ready;  // its READY versions, ascending
};

struct ServingSnapshot {
  std::map<std::string, ServingModel, std::less<>> models;

  // Null for a model the manager does not know.
  const ServingModel* Find(std::string_view name) const {
    auto it = models.find(name);
    return it == models.end() ? nullptr : &it->second;
  }
};

// The READY version a request gets from `model`, as the manager chooses it: the named one;
// else the one the traffic weights pick with `u` (uniform in [0, 1); nullopt: weights are
// not consulted, as for metadata) if it is ready; else the highest ready one. Null when the
// snapshot cannot answer: the config is unusable, the named version is not ready, or none is.
const ServingVersion* ChooseServingVersion(const ServingModel& model,
                                           std::optional<int64_t> version, std::optional<double> u);

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_SERVING_SNAPSHOT_H_
