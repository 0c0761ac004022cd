// The text ops a pipeline's `op:` may name: tokenize.
#ifndef INFERD_OPS_TEXT_REGISTER_TEXT_OPS_H_
#define INFERD_OPS_TEXT_REGISTER_TEXT_OPS_H_

#include "core/pipeline/op_registry.h"

namespace inferd {

void RegisterTextOps(OpRegistry& registry);

}  // namespace inferd

#endif  // INFERD_OPS_TEXT_REGISTER_TEXT_OPS_H_
