// One request through a pipeline: the scope (a tensor per slot), how many producers each
// step still waits for, and the first error.
//
// Start runs on the pipeline's execution instance: every step that is ready at once (the
// heavy ops, which may read only pipeline inputs, and any light op over the inputs), then
// submits every ready model step through the StepRunner, all before waiting on any. A model
// step's completion (on the step model's thread) stores its outputs, runs the light ops now
// ready inline (microseconds), and submits the model steps now ready. The step that completes
// the last one calls `done`. The first error wins; later completions are dropped.
//
// Thread-safety: completions arrive on any thread; the state is under one mutex, and ops and
// submissions run outside it. Ownership: the run keeps itself alive through the callbacks it
// hands out (shared_ptr); the compiled pipeline is shared with it.
#ifndef INFERD_CORE_PIPELINE_PIPELINE_RUN_H_
#define INFERD_CORE_PIPELINE_PIPELINE_RUN_H_

#include <memory>

#include "core/backend/async_backend_model.h"
#include "core/pipeline/compiled_pipeline.h"
#include "core/pipeline/step_runner.h"

namespace inferd {

// Runs `execution` through `pipeline`; `done` is called exactly once.
void StartPipelineRun(std::shared_ptr<const CompiledPipeline> pipeline, StepRunner* runner,
                      AsyncExecution execution, AsyncDone done);

// `tensor` ([d0, ...]) with a leading dimension of 1, or without it ([1, d...] -> [d...]);
// views over the same bytes.
Tensor WithBatchDim(const Tensor& tensor);
Tensor WithoutBatchDim(const Tensor& tensor);

}  // namespace inferd

#endif  // INFERD_CORE_PIPELINE_PIPELINE_RUN_H_
