// BYTES tensors: variable-length byte strings, serialized as the binary protocol sends them
// (per element a 4-byte little-endian length, then the bytes), so that a BYTES input arriving
// in a binary HTTP body or a gRPC raw_input_contents entry is used as it is, and batching can
// concatenate requests' buffers like any other tensor's.
#ifndef INFERD_CORE_TYPES_BYTES_TENSOR_H_
#define INFERD_CORE_TYPES_BYTES_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/types/tensor.h"

namespace inferd {

// Checks that `data` holds exactly `count` serialized elements: InvalidArgument naming `what`
// and the element where it goes wrong (a length running past the end, bytes left over).
absl::Status ValidateBytesBuffer(std::span<const std::byte> data, int64_t count,
                                 std::string_view what);

// The bytes each element of a BYTES tensor holds, views into the tensor's buffer (the buffer
// must have passed ValidateBytesBuffer).
std::vector<std::string_view> BytesElements(const Tensor& tensor);

// A BYTES tensor of `shape` holding `elements` (their number must match the shape).
absl::StatusOr<Tensor> MakeBytesTensor(Shape shape, std::span<const std::string_view> elements);

// Appends one serialized element (length prefix + bytes) to `out`.
void AppendBytesElement(std::string_view element, std::string& out);

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_BYTES_TENSOR_H_
