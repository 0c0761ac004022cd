// `op: top_k` and `op: argmax`: the best classes of each row of x (FP32 [..., C], the last
// axis).
//   top_k  params {k, labels?} -> indices INT64 [k], scores FP32 [k], labels BYTES [k]
//   argmax params {labels?}    -> index INT64 [1], score FP32 [1], label BYTES [1]
// Highest score first; equal scores: the lower index first; NaN ranks below every number.
// `labels`: a file of one label per line relative to the version folder; its line count must
// equal C (checked at load against the producer's dims, and per request). Without it a label
// is the class index as text.
#ifndef INFERD_OPS_POST_TOP_K_OP_H_
#define INFERD_OPS_POST_TOP_K_OP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

// The most classes top_k may return per row.
inline constexpr int64_t kMaxTopK = 4096;

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeTopKOp(const OpLoadRequest& request);
absl::StatusOr<std::unique_ptr<PipelineOp>> MakeArgmaxOp(const OpLoadRequest& request);

}  // namespace inferd

#endif  // INFERD_OPS_POST_TOP_K_OP_H_
