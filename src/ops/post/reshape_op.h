// `op: reshape`: params {shape, datatype?}; x ([B, ...] of `datatype`, FP32 by default, any
// dims) -> y ([B, shape...]), a view over the same bytes (no copy). One entry of `shape` may
// be -1, inferred from the row's element count; a row whose count does not fit is an error.
// Not for BYTES (their elements have no fixed size).
#ifndef INFERD_OPS_POST_RESHAPE_OP_H_
#define INFERD_OPS_POST_RESHAPE_OP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeReshapeOp(const OpLoadRequest& request);

}  // namespace inferd

#endif  // INFERD_OPS_POST_RESHAPE_OP_H_
