// The binary tensor extension's input side: the bytes after the JSON header of a request
// body, handed out in order to the inputs that carry `binary_data_size`.
//
// A tensor is a view into the body (no copy) when its offset is aligned for its element type;
// otherwise it is copied into an aligned buffer. The body is held through a shared_ptr that
// every view keeps alive.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_BINARY_TENSOR_READER_H_
#define INFERD_FRONTENDS_HTTP_CODECS_BINARY_TENSOR_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/types/tensor.h"

namespace inferd {

class BinaryTensorReader {
 public:
  // The binary section is `body[offset:]`.
  BinaryTensorReader(std::shared_ptr<std::string> body, size_t offset);

  // The next `size` bytes as a tensor of `type` and `shape`; InvalidArgument naming `what`
  // when they run past the body or do not match the shape (for BYTES: when the elements'
  // length prefixes do not add up to `size` for the shape's element count).
  absl::StatusOr<Tensor> Next(DataType type, Shape shape, uint64_t size, std::string_view what);

  // InvalidArgument when bytes are left over after the last binary input.
  absl::Status CheckFullyRead() const;

  // How many inputs were views into the body (for tests of the zero-copy path).
  int views() const { return views_; }

 private:
  const std::shared_ptr<std::string> body_;
  const size_t start_;
  size_t offset_;
  int views_ = 0;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_BINARY_TENSOR_READER_H_
