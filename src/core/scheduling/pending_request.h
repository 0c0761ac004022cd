// A request waiting in a model's queue, with what the scheduler needs to place it.
#ifndef INFERD_CORE_SCHEDULING_PENDING_REQUEST_H_
#define INFERD_CORE_SCHEDULING_PENDING_REQUEST_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "common/clock.h"
#include "core/backend/infer_request.h"

namespace inferd {

struct PendingRequest {
  std::unique_ptr<InferRequest> request;
  int64_t rows = 1;       // batch rows the request carries (1 for unbatched models)
  int priority = 1;       // 1 = highest
  uint64_t sequence = 0;  // arrival order, for preserve_ordering
  TimePoint enqueued;
  std::optional<TimePoint> deadline;
};

// Whether two requests may share a batch: same inputs with the same non-batch dimensions.
bool ShapesCompatible(const InferRequest& a, const InferRequest& b);

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_PENDING_REQUEST_H_
