// A loaded pipeline version: its compiled graph and ops, run one request at a time per call
// by PipelineRun (AsyncBackendModel). The scheduler's instance threads start requests (heavy
// ops, then model step submissions) and return to the queue at once.
//
// Thread-safety: ExecuteAsync may be called from several instances at once (the graph is
// immutable). Holds no handle on any step model.
#ifndef INFERD_BACKENDS_PIPELINE_PIPELINE_MODEL_H_
#define INFERD_BACKENDS_PIPELINE_PIPELINE_MODEL_H_

#include <memory>
#include <span>
#include <vector>

#include "core/backend/async_backend_model.h"
#include "core/backend/backend.h"
#include "core/pipeline/compiled_pipeline.h"
#include "core/pipeline/step_runner.h"

namespace inferd {

class PipelineModel : public BackendModel, public AsyncBackendModel {
 public:
  // `runner` must outlive every request (the PipelineHost, owned by the backend's owner).
  PipelineModel(std::shared_ptr<const CompiledPipeline> pipeline, StepRunner* runner)
      : pipeline_(std::move(pipeline)), runner_(runner) {}

  // Never called: the scheduler takes the async path for this model.
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override;
  void ExecuteAsync(AsyncExecution execution, AsyncDone done) override;
  uint64_t memory_bytes() const override;

 private:
  const std::shared_ptr<const CompiledPipeline> pipeline_;
  StepRunner* const runner_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_PIPELINE_PIPELINE_MODEL_H_
