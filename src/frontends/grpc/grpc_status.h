// The one place where a core Status becomes a gRPC status.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_STATUS_H_
#define INFERD_FRONTENDS_GRPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace inferd {

// Each Status code to the gRPC code of the same name (DataLoss -> DATA_LOSS, Aborted ->
// ABORTED, PermissionDenied -> PERMISSION_DENIED, ...).
grpc::StatusCode GrpcCodeFor(absl::StatusCode code);

// The status with its gRPC code and the same message the HTTP frontend puts in {"error"}.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_STATUS_H_
