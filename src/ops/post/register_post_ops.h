// The post-processing ops (softmax, sigmoid, top_k, argmax, threshold, reshape): pure C++,
// light (they run inline where the step feeding them completes). See docs/pipelines.md.
#ifndef INFERD_OPS_POST_REGISTER_POST_OPS_H_
#define INFERD_OPS_POST_REGISTER_POST_OPS_H_

#include "core/pipeline/op_registry.h"

namespace inferd {

void RegisterPostOps(OpRegistry& registry);

}  // namespace inferd

#endif  // INFERD_OPS_POST_REGISTER_POST_OPS_H_
