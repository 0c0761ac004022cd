#include "core/config/traffic_rules.h"

#include <algorithm>

#include "common/strings.h"
#include "core/config/version_dirs.h"

namespace inferd {

std::optional<int64_t> ResolveTrafficTarget(const TrafficRules& rules, std::string_view target) {
  if (auto label = rules.labels.find(target); label != rules.labels.end()) return label->second;
  return ParseVersionDirName(target);
}

std::optional<int64_t> PickWeightedVersion(const TrafficRules& rules, double u) {
  // Summed as doubles: rules from config.yaml are not all validated, and no sum overflows.
  double total = 0;
  for (const auto& [target, weight] : rules.weights) total += static_cast<double>(weight);
  if (total <= 0) return std::nullopt;
  double point = u * total;
  for (const auto& [target, weight] : rules.weights) {
    point -= static_cast<double>(weight);
    if (point < 0) return ResolveTrafficTarget(rules, target);
  }
  return ResolveTrafficTarget(rules, rules.weights.back().first);
}

absl::Status ValidateTrafficRules(const TrafficRules& rules, const std::vector<int64_t>& allowed) {
  auto is_allowed = [&](int64_t v) {
    return std::binary_search(allowed.begin(), allowed.end(), v);
  };
  const std::string served = StrCat("loaded versions: [", StrJoin(allowed, ", "), "]");
  for (const auto& [label, version] : rules.labels) {
    if (!is_allowed(version)) {
      return absl::InvalidArgumentError(StrCat("label '", label, "' points at version ", version,
                                               ", which is not loaded (", served, ")"));
    }
  }
  for (const auto& [target, weight] : rules.weights) {
    // Bounded so that the weights' sum cannot overflow (two of INT64_MAX did).
    if (weight <= 0 || weight > kMaxTrafficWeight) {
      return absl::InvalidArgumentError(StrCat("traffic weight for '", target, "' must be 1..",
                                               kMaxTrafficWeight, ", got ", weight));
    }
    std::optional<int64_t> version = ResolveTrafficTarget(rules, target);
    if (!version) {
      return absl::InvalidArgumentError(
          StrCat("traffic target '", target, "' is neither a label nor a version number"));
    }
    if (!is_allowed(*version)) {
      return absl::InvalidArgumentError(StrCat("traffic target '", target, "' is version ",
                                               *version, ", which is not loaded (", served, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd
