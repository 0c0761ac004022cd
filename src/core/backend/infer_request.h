// One inference request as the core sees it, whatever protocol it arrived on.
//
// Ownership: a frontend builds the request and hands it to the model's scheduler as a
// unique_ptr; from then on the scheduler owns it and calls `on_complete` exactly once, from
// an execution thread (or the enqueueing thread when it is refused). The callback must not
// block: frontends hand the response back to their own I/O threads.
#ifndef INFERD_CORE_BACKEND_INFER_REQUEST_H_
#define INFERD_CORE_BACKEND_INFER_REQUEST_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/types/tensor.h"

namespace inferd {

struct ModelConfig;  // core/config/model_config.h

struct InferResponse {
  absl::Status status;
  std::vector<NamedTensor> outputs;  // empty unless status is OK
  int64_t batch_size = 0;            // rows in the engine call that ran it; 0 if none did
};

// The longest timeout a client may ask for (one day): deadlines are computed as now + timeout
// on a nanosecond clock, which a client's INT64_MAX microseconds overflowed.
inline constexpr int64_t kMaxTimeoutUs = int64_t{86'400} * 1'000'000;

// The longest request id a client may send (KServe's and gRPC's "id"): it is echoed into
// every response, and into every event of a stream, so an unbounded one multiplied a request
// into hundreds of megabytes of output.
inline constexpr size_t kMaxClientIdBytes = 256;

struct InferRequest {
  std::string id;                   // client's request id, echoed back
  std::vector<NamedTensor> inputs;  // validated against the model before enqueueing
  // Outputs to return; empty means all of the model's outputs.
  std::vector<std::string> requested_outputs;
  // Queue priority, 1 = highest; 0: the model's default level.
  int priority = 0;
  // The priority when the request sets none, clamped to the model's levels: the default of
  // the caller's tenant (auth/tenant.h). 0: the model's default level.
  int fallback_priority = 0;
  // How long the request may wait in the queue, in microseconds; 0: the model's default.
  int64_t timeout_us = 0;  // at most kMaxTimeoutUs
  // The caller's tenant (empty: none): requests of different tenants share no cached state
  // (a generative model's KV cache, GenerateRequest::cache_partition).
  std::string tenant;
  // Set by a frontend that can tell when its client goes away (null: it cannot). Read by
  // what runs for long: a generative model's infer stops generating when it turns true.
  std::shared_ptr<std::atomic<bool>> cancelled;
  // The config the inputs were validated (and ordered) against before the model was acquired
  // (InferencePath); a version whose config is this one does not check them again.
  std::shared_ptr<const ModelConfig> validated_for;
  std::function<void(InferResponse)> on_complete;
};

}  // namespace inferd

#endif  // INFERD_CORE_BACKEND_INFER_REQUEST_H_
