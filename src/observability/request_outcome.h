// The outcome classes a finished request is counted under, the same for every protocol:
// success, rejected (queue full, model unavailable, shutting down), timeout (deadline passed
// in the queue), bad_input (the client's fault) and backend_error (the engine failed).
#ifndef INFERD_OBSERVABILITY_REQUEST_OUTCOME_H_
#define INFERD_OBSERVABILITY_REQUEST_OUTCOME_H_

#include <array>
#include <string_view>

#include "absl/status/status.h"

namespace inferd {

enum class RequestOutcome { kSuccess, kRejected, kTimeout, kBadInput, kBackendError };
inline constexpr int kRequestOutcomeCount = 5;

inline constexpr std::array<RequestOutcome, kRequestOutcomeCount> kAllRequestOutcomes = {
    RequestOutcome::kSuccess, RequestOutcome::kRejected, RequestOutcome::kTimeout,
    RequestOutcome::kBadInput, RequestOutcome::kBackendError};

RequestOutcome OutcomeForStatus(absl::StatusCode code);
// The label value: "success", "rejected", "timeout", "bad_input", "backend_error".
std::string_view OutcomeName(RequestOutcome outcome);

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_REQUEST_OUTCOME_H_
