#include "frontends/grpc/grpc_status.h"

#include <string>

#include "common/client_paths.h"

namespace inferd {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case absl::StatusCode::kOutOfRange:
      code = grpc::StatusCode::OUT_OF_RANGE;
      break;
    case absl::StatusCode::kFailedPrecondition:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case absl::StatusCode::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case absl::StatusCode::kUnauthenticated:
      code = grpc::StatusCode::UNAUTHENTICATED;
      break;
    case absl::StatusCode::kPermissionDenied:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case absl::StatusCode::kResourceExhausted:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    case absl::StatusCode::kUnimplemented:
      code = grpc::StatusCode::UNIMPLEMENTED;
      break;
    case absl::StatusCode::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      code = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
    case absl::StatusCode::kCancelled:
      code = grpc::StatusCode::CANCELLED;
      break;
    case absl::StatusCode::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
    default:
      code = grpc::StatusCode::UNKNOWN;
      break;
  }
  return grpc::Status(
      code, WithoutServerPaths(std::string_view(status.message().data(), status.message().size())));
}

}  // namespace inferd
