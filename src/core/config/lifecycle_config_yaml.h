// Reads the lifecycle part of a config.yaml (lifecycle_config.h) from its YAML tree. Apart
// from the struct so that yaml-cpp reaches only the files that parse configs, not the ~20
// that include model_config.h.
#ifndef INFERD_CORE_CONFIG_LIFECYCLE_CONFIG_YAML_H_
#define INFERD_CORE_CONFIG_LIFECYCLE_CONFIG_YAML_H_

#include <set>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "core/config/lifecycle_config.h"

namespace inferd {

// The top-level config.yaml keys this part owns.
const std::set<std::string>& LifecycleConfigKeys();

// Reads the lifecycle keys of `root` (a mapping). Errors name `source` and the field.
absl::StatusOr<LifecycleConfig> ParseLifecycleConfig(const YAML::Node& root,
                                                     std::string_view source);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_LIFECYCLE_CONFIG_YAML_H_
