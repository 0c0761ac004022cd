// `op: threshold`: params {value}; x (FP32, any shape) -> mask (BOOL, the same shape),
// true where x >= value (a multi-label classifier's decision). NaN is false.
#ifndef INFERD_OPS_POST_THRESHOLD_OP_H_
#define INFERD_OPS_POST_THRESHOLD_OP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeThresholdOp(const OpLoadRequest& request);

}  // namespace inferd

#endif  // INFERD_OPS_POST_THRESHOLD_OP_H_
