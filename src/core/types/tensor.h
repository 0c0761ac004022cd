// A dense, row-major tensor: a datatype, a shape and a byte buffer whose lifetime is shared.
//
// The buffer is owned through a type-erased shared_ptr so that a Tensor can be a view over
// memory owned by someone else without a copy: a request body, or an engine's output tensor
// (the torch backend keeps the at::Tensor alive as the owner). Copying a Tensor copies the
// handle, not the bytes. Thread-safety: immutable after construction apart from the bytes
// behind mutable_data(), which only the creator writes before sharing it.
#ifndef INFERD_CORE_TYPES_TENSOR_H_
#define INFERD_CORE_TYPES_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types/data_type.h"

namespace inferd {

using Shape = std::vector<int64_t>;

// Product of the dimensions; an error for a negative dimension or an overflow.
absl::StatusOr<int64_t> ElementCount(std::span<const int64_t> shape);

// "[2,256]"
std::string ShapeToString(std::span<const int64_t> shape);

class Tensor {
 public:
  Tensor() = default;

  // A zero-filled tensor that owns its bytes. Errors: a negative dimension or a size that
  // overflows (InvalidArgument), no memory (ResourceExhausted). A BYTES tensor gets 4 zero
  // bytes per element: every element is the empty string.
  static absl::StatusOr<Tensor> Allocate(DataType type, Shape shape);
  // As Allocate, without zeroing: for a caller that writes every element (the decoders).
  static absl::StatusOr<Tensor> AllocateForOverwrite(DataType type, Shape shape);
  // As AllocateForOverwrite with the byte size given: for BYTES, whose size the shape does
  // not fix (the caller writes `byte_size` bytes of serialized elements).
  static absl::StatusOr<Tensor> AllocateForOverwrite(DataType type, Shape shape, size_t byte_size);

  // A view over `data`, kept alive by `owner`. `byte_size` must equal the shape's size.
  static Tensor Wrap(DataType type, Shape shape, void* data, size_t byte_size,
                     std::shared_ptr<const void> owner);

  DataType type() const { return type_; }
  const Shape& shape() const { return shape_; }
  int64_t element_count() const { return element_count_; }
  size_t byte_size() const { return byte_size_; }

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() { return data_; }

  // What keeps the bytes alive; engines hold it to keep a zero-copy view valid.
  const std::shared_ptr<const void>& owner() const { return owner_; }

  template <typename T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data_as() {
    return reinterpret_cast<T*>(data_);
  }

 private:
  DataType type_ = DataType::kFp32;
  Shape shape_;
  int64_t element_count_ = 0;
  size_t byte_size_ = 0;
  std::byte* data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

// A tensor with the name it has in the model's signature.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_TENSOR_H_
