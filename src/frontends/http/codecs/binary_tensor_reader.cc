#include "frontends/http/codecs/binary_tensor_reader.h"

#include <cstring>
#include <span>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {

BinaryTensorReader::BinaryTensorReader(std::shared_ptr<std::string> body, size_t offset)
    : body_(std::move(body)), start_(offset), offset_(offset) {}

absl::StatusOr<Tensor> BinaryTensorReader::Next(DataType type, Shape shape, uint64_t size,
                                                std::string_view what) {
  const size_t remaining = body_->size() - offset_;
  if (size > remaining) {
    return absl::InvalidArgumentError(
        StrCat(what, ": binary_data_size is ", size, " but only ", remaining,
               " bytes of binary data remain after byte ", offset_ - start_,
               " of the binary section (Inference-Header-Content-Length puts the section at byte ",
               start_, " of the ", body_->size(), "-byte body)"));
  }
  ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  std::byte* data = reinterpret_cast<std::byte*>(body_->data()) + offset_;
  if (type == DataType::kBytes) {
    RETURN_IF_ERROR(ValidateBytesBuffer(std::span<const std::byte>(data, size), count, what));
  } else {
    const size_t element_size = DataTypeSize(type);
    if (static_cast<uint64_t>(count) > size / element_size ||
        static_cast<uint64_t>(count) * element_size != size) {
      return absl::InvalidArgumentError(
          StrCat(what, ": binary_data_size is ", size, " bytes, but shape ", ShapeToString(shape),
                 " of ", DataTypeName(type), " needs ", count, " x ", element_size, " bytes"));
    }
  }
  offset_ += size;
  const size_t alignment = type == DataType::kBytes ? 1 : DataTypeSize(type);
  if (reinterpret_cast<uintptr_t>(data) % alignment == 0) {
    ++views_;
    return Tensor::Wrap(type, std::move(shape), data, size, body_);
  }
  // Unaligned (the JSON header's length decides where tensors start): copy.
  ASSIGN_OR_RETURN(Tensor copy, Tensor::AllocateForOverwrite(type, std::move(shape)));
  std::memcpy(copy.mutable_data(), data, size);
  return copy;
}

absl::Status BinaryTensorReader::CheckFullyRead() const {
  if (offset_ == body_->size()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(body_->size() - offset_, " bytes of binary data are left over after the inputs' ",
             offset_ - start_, " bytes: the inputs' binary_data_size values must add up to the ",
             body_->size() - start_, " bytes after the JSON header"));
}

}  // namespace inferd
