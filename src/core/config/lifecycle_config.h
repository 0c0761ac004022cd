// The lifecycle part of a model's config.yaml: which versions are served, when they load,
// whether they may be evicted, their integrity digests and their traffic rules.
//
//   version_policy: {latest: 2}    # or `all`, or {specific: [1, 3]}; default latest 1
//   load: lazy                     # eager (default): at start; lazy: on the first request
//   pin: true                      # never evicted to make room for another model
//   idle_unload_s: 600             # unloaded after this long without a request (0: never)
//   version_swap: resource_preserving  # default availability_preserving (see LifecycleConfig)
//   sha256: {1: 3b0c...}           # version -> SHA-256 of <version>/<model file>
//   labels: {stable: 1, canary: 2}
//   traffic: {stable: 90, canary: 10}
#ifndef INFERD_CORE_CONFIG_LIFECYCLE_CONFIG_H_
#define INFERD_CORE_CONFIG_LIFECYCLE_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/config/traffic_rules.h"
#include "core/config/version_policy.h"

namespace inferd {

struct LifecycleConfig {
  VersionPolicy version_policy;
  bool lazy = false;
  bool pin = false;
  int64_t idle_unload_s = 0;
  // availability_preserving (default): a new version (or config) loads while the old one
  // serves, so memory briefly holds both. resource_preserving: the old one is unloaded
  // first; requests arriving in between wait for the new one (bounded by their timeout).
  bool resource_preserving = false;
  std::map<int64_t, std::string> sha256;  // version -> lowercase hex digest
  TrafficRules traffic;
};

// Its parser is in lifecycle_config_yaml.h: only the config readers see yaml-cpp.

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_LIFECYCLE_CONFIG_H_
