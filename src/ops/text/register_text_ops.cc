#include "ops/text/register_text_ops.h"

#include "ops/text/tokenize_op.h"

namespace inferd {

void RegisterTextOps(OpRegistry& registry) { registry.Register("tokenize", MakeTokenizeOp); }

}  // namespace inferd
