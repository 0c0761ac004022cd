// Which versions of a model are served: config.yaml's `version_policy`.
//
//   version_policy: {latest: 2}        the two highest versions (default: latest 1)
//   version_policy: all                every version folder
//   version_policy: {specific: [1, 3]} exactly these (those that exist)
#ifndef INFERD_CORE_CONFIG_VERSION_POLICY_H_
#define INFERD_CORE_CONFIG_VERSION_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace inferd {

struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int64_t latest = 1;             // kLatest: how many of the highest versions
  std::vector<int64_t> specific;  // kSpecific: ascending, without repeats
};

// The versions `policy` serves out of `available` (ascending); the result is ascending.
std::vector<int64_t> SelectVersions(const VersionPolicy& policy,
                                    const std::vector<int64_t>& available);

// "latest 2", "all", "specific [1, 3]": for messages.
std::string DescribeVersionPolicy(const VersionPolicy& policy);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_VERSION_POLICY_H_
