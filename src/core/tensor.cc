#include "core/tensor.h"

#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "common/strings.h"

namespace inferd {

absl::StatusOr<int64_t> ElementCount(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          StrCat("shape ", ShapeToString(shape), " has a negative dimension"));
    }
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) {
      return absl::InvalidArgumentError(
          StrCat("shape ", ShapeToString(shape), " has too many elements"));
    }
    count *= dim;
  }
  return count;
}

std::string ShapeToString(std::span<const int64_t> shape) {
  return StrCat("[", StrJoin(shape, ","), "]");
}

absl::StatusOr<Tensor> Tensor::Allocate(DataType type, Shape shape) {
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status();
  const size_t bytes = static_cast<size_t>(*count) * DataTypeSize(type);
  // make_shared_for_overwrite would leave the bytes uninitialised; zeroing keeps warm-up
  // inputs and partially written buffers deterministic, and costs little next to a model.
  std::shared_ptr<std::byte[]> buffer(new std::byte[bytes == 0 ? 1 : bytes]());
  std::byte* raw = buffer.get();
  return Wrap(type, std::move(shape), raw, bytes, std::move(buffer));
}

Tensor Tensor::Wrap(DataType type, Shape shape, void* data, size_t byte_size,
                    std::shared_ptr<const void> owner) {
  Tensor t;
  t.type_ = type;
  t.element_count_ = ElementCount(shape).value_or(0);
  t.shape_ = std::move(shape);
  t.byte_size_ = byte_size;
  t.data_ = static_cast<std::byte*>(data);
  t.owner_ = std::move(owner);
  return t;
}

}  // namespace inferd
