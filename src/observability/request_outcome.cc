#include "observability/request_outcome.h"

namespace inferd {

RequestOutcome OutcomeForStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return RequestOutcome::kSuccess;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kUnauthenticated:  // a missing or wrong key is the client's fault
    case absl::StatusCode::kPermissionDenied:
      return RequestOutcome::kBadInput;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable:
      return RequestOutcome::kRejected;
    case absl::StatusCode::kDeadlineExceeded:
      return RequestOutcome::kTimeout;
    default:
      return RequestOutcome::kBackendError;
  }
}

std::string_view OutcomeName(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kSuccess:
      return "success";
    case RequestOutcome::kRejected:
      return "rejected";
    case RequestOutcome::kTimeout:
      return "timeout";
    case RequestOutcome::kBadInput:
      return "bad_input";
    case RequestOutcome::kBackendError:
      return "backend_error";
  }
  return "backend_error";
}

}  // namespace inferd
