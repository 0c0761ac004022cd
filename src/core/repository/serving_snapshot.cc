#include "core/repository/serving_snapshot.h"

#include <algorithm>

namespace inferd {

void VersionUsage::Touch(TimePoint now) {
  const Duration::rep at = now.time_since_epoch().count();
  Duration::rep seen = last_used_.load(std::memory_order_relaxed);
  // Two requests may read the clock in one order and store in the other.
  while (seen < at && !last_used_.compare_exchange_weak(seen, at, std::memory_order_relaxed)) {
  }
}

namespace {

const ServingVersion* FindReady(const ServingModel& model, int64_t version) {
  auto it =
      std::lower_bound(model.ready.begin(), model.ready.end(), version,
                       [](const ServingVersion& v, int64_t wanted) { return v.version < wanted; });
  return it != model.ready.end() && it->version == version ? &*it : nullptr;
}

}  // namespace

const ServingVersion* ChooseServingVersion(const ServingModel& model,
                                           std::optional<int64_t> version,
                                           std::optional<double> u) {
  if (!model.config_ok || model.ready.empty()) return nullptr;
  if (version) return FindReady(model, *version);
  if (u && !model.traffic.weights.empty()) {
    if (std::optional<int64_t> picked = PickWeightedVersion(model.traffic, *u)) {
      if (const ServingVersion* ready = FindReady(model, *picked)) return ready;
    }
  }
  // The highest READY version keeps serving while a newer one loads (zero downtime), or
  // when the newer one failed to load.
  return &model.ready.back();
}

}  // namespace inferd
