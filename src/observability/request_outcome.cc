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

absl::StatusCode StatusCodeForHttp(unsigned http_status) {
  if (http_status < 400) return absl::StatusCode::kOk;
  switch (http_status) {
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    case 404:
      return absl::StatusCode::kNotFound;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 501:
      return absl::StatusCode::kUnimplemented;
    default:
      // 400, 405, 413 and the other 4xx are the client's; 5xx the server's.
      return http_status < 500 ? absl::StatusCode::kInvalidArgument : absl::StatusCode::kInternal;
  }
}

}  // namespace inferd
