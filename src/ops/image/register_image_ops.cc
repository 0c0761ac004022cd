#include "ops/image/register_image_ops.h"

#include "ops/image/image_to_tensor_op.h"

namespace inferd {

void RegisterImageOps(OpRegistry& registry) {
  registry.Register("image_to_tensor", MakeImageToTensorOp);
}

}  // namespace inferd
