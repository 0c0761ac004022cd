#include "core/config/version_policy.h"

#include <algorithm>

#include "common/strings.h"

namespace inferd {

std::vector<int64_t> SelectVersions(const VersionPolicy& policy,
                                    const std::vector<int64_t>& available) {
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll:
      return available;
    case VersionPolicy::Kind::kLatest: {
      const auto keep = static_cast<size_t>(std::max<int64_t>(policy.latest, 0));
      if (available.size() <= keep) return available;
      return {available.end() - static_cast<std::ptrdiff_t>(keep), available.end()};
    }
    case VersionPolicy::Kind::kSpecific: {
      std::vector<int64_t> chosen;
      for (int64_t v : available) {
        if (std::binary_search(policy.specific.begin(), policy.specific.end(), v)) {
          chosen.push_back(v);
        }
      }
      return chosen;
    }
  }
  return available;
}

std::string DescribeVersionPolicy(const VersionPolicy& policy) {
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll:
      return "all";
    case VersionPolicy::Kind::kLatest:
      return StrCat("latest ", policy.latest);
    case VersionPolicy::Kind::kSpecific:
      return StrCat("specific [", StrJoin(policy.specific, ", "), "]");
  }
  return "?";
}

}  // namespace inferd
