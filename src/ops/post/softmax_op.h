// `op: softmax` and `op: sigmoid`: over the last axis, in float, softmax max-subtracted so
// that large logits do not overflow. Port x (FP32, any shape) -> y (FP32, the same shape).
// No params.
#ifndef INFERD_OPS_POST_SOFTMAX_OP_H_
#define INFERD_OPS_POST_SOFTMAX_OP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeSoftmaxOp(const OpLoadRequest& request);
absl::StatusOr<std::unique_ptr<PipelineOp>> MakeSigmoidOp(const OpLoadRequest& request);

}  // namespace inferd

#endif  // INFERD_OPS_POST_SOFTMAX_OP_H_
