// Labels and weighted traffic splits between the versions of one model (blue/green, canary).
//
//   labels:  {stable: 1, canary: 2}     a name for a version; /v1/models/M/labels/L:predict
//   traffic: {stable: 90, canary: 10}   requests that name no version are split by weight;
//                                       a key is a label or a version number
//
// Blue/green is an atomic switch of a label (or of the weights) through the runtime API; a
// request in flight keeps the version it was given.
// Thread-safety: a plain value; the manager replaces it whole under its lock.
#ifndef INFERD_CORE_CONFIG_TRAFFIC_RULES_H_
#define INFERD_CORE_CONFIG_TRAFFIC_RULES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace inferd {

struct TrafficRules {
  std::map<std::string, int64_t, std::less<>> labels;  // label -> version
  // (label or version number, weight > 0), in config order.
  std::vector<std::pair<std::string, int64_t>> weights;

  bool operator==(const TrafficRules&) const = default;
};

// The version a label or a version number names; nullopt when it names none.
std::optional<int64_t> ResolveTrafficTarget(const TrafficRules& rules, std::string_view target);

// The version for a request that names none, chosen by weight with `u` uniform in [0, 1);
// nullopt when the rules have no weights.
std::optional<int64_t> PickWeightedVersion(const TrafficRules& rules, double u);

inline constexpr int64_t kMaxTrafficWeight = 1'000'000;

// InvalidArgument unless every label and weight names one of `allowed` (ascending), so that
// traffic can never be sent to a version that is not loaded, and every weight is
// 1..kMaxTrafficWeight.
absl::Status ValidateTrafficRules(const TrafficRules& rules, const std::vector<int64_t>& allowed);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_TRAFFIC_RULES_H_
