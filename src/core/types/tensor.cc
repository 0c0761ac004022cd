#include "core/types/tensor.h"

#include <limits>
#include <new>
#include <optional>
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

namespace {

// A buffer for `shape`, or an error when its byte size overflows or memory runs out: shapes
// come from clients and config files, so neither may bring the server down.
absl::StatusOr<Tensor> AllocateBuffer(DataType type, Shape shape, bool zero,
                                      std::optional<size_t> byte_size = std::nullopt) {
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status();
  // BYTES: an element's smallest form is its 4-byte length (the empty string).
  const size_t element_size = type == DataType::kBytes ? 4 : DataTypeSize(type);
  if (static_cast<uint64_t>(*count) > std::numeric_limits<size_t>::max() / element_size) {
    return absl::InvalidArgumentError(
        StrCat("shape ", ShapeToString(shape), " is too large to allocate"));
  }
  const size_t bytes = byte_size.value_or(static_cast<size_t>(*count) * element_size);
  std::byte* raw = nullptr;
  try {
    raw = zero ? new std::byte[bytes == 0 ? 1 : bytes]() : new std::byte[bytes == 0 ? 1 : bytes];
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(StrCat("cannot allocate ", bytes, " bytes for shape ",
                                               ShapeToString(shape), " of ", DataTypeName(type)));
  }
  std::shared_ptr<std::byte[]> buffer(raw);
  return Tensor::Wrap(type, std::move(shape), raw, bytes, std::move(buffer));
}

}  // namespace

absl::StatusOr<Tensor> Tensor::Allocate(DataType type, Shape shape) {
  return AllocateBuffer(type, std::move(shape), /*zero=*/true);
}

absl::StatusOr<Tensor> Tensor::AllocateForOverwrite(DataType type, Shape shape) {
  return AllocateBuffer(type, std::move(shape), /*zero=*/false);
}

absl::StatusOr<Tensor> Tensor::AllocateForOverwrite(DataType type, Shape shape, size_t byte_size) {
  return AllocateBuffer(type, std::move(shape), /*zero=*/false, byte_size);
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
