// The image ops a pipeline's `op:` may name: image_to_tensor.
#ifndef INFERD_OPS_IMAGE_REGISTER_IMAGE_OPS_H_
#define INFERD_OPS_IMAGE_REGISTER_IMAGE_OPS_H_

#include "core/pipeline/op_registry.h"

namespace inferd {

void RegisterImageOps(OpRegistry& registry);

}  // namespace inferd

#endif  // INFERD_OPS_IMAGE_REGISTER_IMAGE_OPS_H_
