#include "ops/post/post_op_base.h"

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {

absl::StatusOr<int64_t> LastAxisOf(const Tensor& x, std::string_view op) {
  if (x.type() != DataType::kFp32) {
    return absl::InvalidArgumentError(StrCat(op, ": takes FP32, got ", DataTypeName(x.type())));
  }
  if (x.shape().size() < 2 || x.shape().back() <= 0) {
    return absl::InvalidArgumentError(
        StrCat(op, ": takes [batch, ..., classes] with at least one class, got shape ",
               ShapeToString(x.shape())));
  }
  return x.shape().back();
}

}  // namespace inferd
