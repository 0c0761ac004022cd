#include "backends/pipeline/pipeline_model.h"

#include <utility>

#include "core/pipeline/pipeline_run.h"

namespace inferd {

absl::StatusOr<std::vector<Tensor>> PipelineModel::Execute(std::span<const Tensor> inputs) {
  (void)inputs;
  return absl::UnimplementedError("a pipeline runs through ExecuteAsync only");
}

void PipelineModel::ExecuteAsync(AsyncExecution execution, AsyncDone done) {
  StartPipelineRun(pipeline_, runner_, std::move(execution), std::move(done));
}

uint64_t PipelineModel::memory_bytes() const {
  uint64_t bytes = 0;
  for (const auto& op : pipeline_->ops) bytes += op->memory_bytes();
  return bytes;
}

}  // namespace inferd
