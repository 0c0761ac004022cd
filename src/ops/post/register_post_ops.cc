#include "ops/post/register_post_ops.h"

#include "ops/post/reshape_op.h"
#include "ops/post/softmax_op.h"
#include "ops/post/threshold_op.h"
#include "ops/post/top_k_op.h"

namespace inferd {

void RegisterPostOps(OpRegistry& registry) {
  registry.Register("softmax", MakeSoftmaxOp);
  registry.Register("sigmoid", MakeSigmoidOp);
  registry.Register("top_k", MakeTopKOp);
  registry.Register("argmax", MakeArgmaxOp);
  registry.Register("threshold", MakeThresholdOp);
  registry.Register("reshape", MakeReshapeOp);
}

}  // namespace inferd
