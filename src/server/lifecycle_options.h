// Turns the lifecycle flags (--model-control, --load-model, --lazy-load, --memory-budget,
// --watch-interval-ms, --settle-ms) into the model manager's options.
#ifndef INFERD_SERVER_LIFECYCLE_OPTIONS_H_
#define INFERD_SERVER_LIFECYCLE_OPTIONS_H_

#include "absl/status/statusor.h"
#include "core/repository/model_manager.h"
#include "server/server_options.h"

namespace inferd {

// InvalidArgument with an actionable message for a malformed budget or a --load-model
// without --model-control explicit.
absl::StatusOr<ModelManagerOptions> LifecycleOptionsFrom(const ServerOptions& options);

}  // namespace inferd

#endif  // INFERD_SERVER_LIFECYCLE_OPTIONS_H_
