// The one place where a Status code becomes an HTTP status, and back: for replies that were
// built with a bare HTTP status (405, 413), so that they are counted like the others, and for
// the C++ client (src/client), which turns an error reply into the Status the server had.
#ifndef INFERD_COMMON_HTTP_STATUS_H_
#define INFERD_COMMON_HTTP_STATUS_H_

#include "absl/status/status.h"

namespace inferd {

// InvalidArgument, OutOfRange, FailedPrecondition -> 400, Unauthenticated -> 401,
// PermissionDenied -> 403, NotFound -> 404, AlreadyExists, Aborted -> 409,
// ResourceExhausted -> 429, Unimplemented -> 501, Unavailable -> 503,
// DeadlineExceeded -> 504, anything else 500.
unsigned HttpStatusFor(absl::StatusCode code);

// The Status code an HTTP status stands for: the inverse of HttpStatusFor (400 and the 4xx it
// does not produce are InvalidArgument, other 5xx Internal).
absl::StatusCode StatusCodeForHttp(unsigned http_status);

}  // namespace inferd

#endif  // INFERD_COMMON_HTTP_STATUS_H_
