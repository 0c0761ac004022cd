// An optional capability of a BackendModel (beside GenerativeModel): a model that answers a
// request later, from any thread, instead of returning from Execute. A pipeline is one: its
// execution instance starts the request (heavy ops, then submitting model steps) and goes
// back to the queue at once, and the last step's completion finishes the request.
//
// The Scheduler detects the capability (dynamic_cast) and calls ExecuteAsync per request,
// never merging requests into batches; queue bounds, deadlines, priorities and statistics
// stay the scheduler's.
#ifndef INFERD_CORE_BACKEND_ASYNC_BACKEND_MODEL_H_
#define INFERD_CORE_BACKEND_ASYNC_BACKEND_MODEL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/types/tensor.h"

namespace inferd {

// One request as an async model sees it: its inputs in config order and what it must pass
// on to the work it starts (so a step model sees the request's deadline, priority, tenant and
// cancellation).
struct AsyncExecution {
  std::vector<Tensor> inputs;
  std::string id;
  std::string tenant;
  int priority = 0;                   // 0: the step models' defaults
  std::optional<TimePoint> deadline;  // on the scheduler's time source; none: no deadline
  const TimeSource* time = RealTime();
  std::shared_ptr<std::atomic<bool>> cancelled;  // null: the frontend cannot tell
};

// One tensor per config output, in config order, or the error.
using AsyncDone = std::function<void(absl::StatusOr<std::vector<Tensor>>)>;

class AsyncBackendModel {
 public:
  virtual ~AsyncBackendModel() = default;
  // Starts `execution`; `done` runs exactly once, on any thread (possibly before this
  // returns). Must not block on other requests.
  virtual void ExecuteAsync(AsyncExecution execution, AsyncDone done) = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_BACKEND_ASYNC_BACKEND_MODEL_H_
