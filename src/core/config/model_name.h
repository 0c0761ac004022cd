// What a model name may be. Names arrive from clients (URLs, gRPC fields) and become folder
// names under the repository, so they are checked before they touch the filesystem or the
// index: printable ASCII without a path separator, not hidden, bounded in length.
#ifndef INFERD_CORE_CONFIG_MODEL_NAME_H_
#define INFERD_CORE_CONFIG_MODEL_NAME_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace inferd {

inline constexpr size_t kMaxModelNameBytes = 128;

// InvalidArgument saying what is wrong (the name escaped and cut short in the message).
absl::Status ValidateModelName(std::string_view name);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_MODEL_NAME_H_
