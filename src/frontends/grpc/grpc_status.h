// The one place where a core Status becomes a gRPC status.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_STATUS_H_
#define INFERD_FRONTENDS_GRPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace inferd {

// InvalidArgument -> INVALID_ARGUMENT, NotFound -> NOT_FOUND, Unavailable -> UNAVAILABLE,
// ResourceExhausted -> RESOURCE_EXHAUSTED, DeadlineExceeded -> DEADLINE_EXCEEDED, ... with the
// same message the HTTP frontend puts in {"error"}.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_STATUS_H_
