// How a pipeline submits a model step: through the same door as a client request
// (InferencePath::Submit: validation before load, lazy load bounded by the request's timeout,
// traffic rules, queueing), so a step model is served, counted and evicted like any other.
//
// Thread-safety: Run is called from any thread, concurrently.
#ifndef INFERD_CORE_PIPELINE_STEP_RUNNER_H_
#define INFERD_CORE_PIPELINE_STEP_RUNNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "core/backend/infer_request.h"
#include "core/model/infer_callbacks.h"

namespace inferd {

class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // Runs `request` on `model` (`version`, else the traffic rules'); the outcome goes to
  // `callbacks.done` exactly once, on any thread.
  virtual void Run(std::string_view model, std::optional<int64_t> version,
                   std::unique_ptr<InferRequest> request, InferCallbacks callbacks) = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_PIPELINE_STEP_RUNNER_H_
