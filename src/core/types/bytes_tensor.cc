#include "core/types/bytes_tensor.h"

#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "common/strings.h"

namespace inferd {
namespace {

uint32_t ReadLength(const std::byte* p) {
  // Little-endian on the wire, whatever the host.
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

absl::Status ValidateBytesBuffer(std::span<const std::byte> data, int64_t count,
                                 std::string_view what) {
  size_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (data.size() - offset < 4) {
      return absl::InvalidArgumentError(
          StrCat(what, ": BYTES element ", i, " of ", count, " is truncated: its 4-byte length ",
                 "needs bytes ", offset, "..", offset + 4, " but the tensor has ", data.size()));
    }
    const uint32_t length = ReadLength(data.data() + offset);
    offset += 4;
    if (data.size() - offset < length) {
      return absl::InvalidArgumentError(StrCat(what, ": BYTES element ", i, " of ", count,
                                               " claims ", length, " bytes but only ",
                                               data.size() - offset, " remain in the tensor"));
    }
    offset += length;
  }
  if (offset != data.size()) {
    return absl::InvalidArgumentError(StrCat(what, ": ", data.size() - offset,
                                             " bytes are left over after the ", count,
                                             " BYTES elements the shape holds"));
  }
  return absl::OkStatus();
}

std::vector<std::string_view> BytesElements(const Tensor& tensor) {
  std::vector<std::string_view> elements;
  elements.reserve(static_cast<size_t>(tensor.element_count()));
  const std::byte* p = tensor.data();
  const std::byte* end = p + tensor.byte_size();
  for (int64_t i = 0; i < tensor.element_count() && end - p >= 4; ++i) {
    const uint32_t length = ReadLength(p);
    p += 4;
    elements.emplace_back(reinterpret_cast<const char*>(p), length);
    p += length;
  }
  return elements;
}

void AppendBytesElement(std::string_view element, std::string& out) {
  const auto length = static_cast<uint32_t>(element.size());
  const char prefix[4] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8 & 0xff),
                          static_cast<char>(length >> 16 & 0xff),
                          static_cast<char>(length >> 24 & 0xff)};
  out.append(prefix, 4);
  out.append(element);
}

absl::StatusOr<Tensor> MakeBytesTensor(Shape shape, std::span<const std::string_view> elements) {
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status();
  if (*count != static_cast<int64_t>(elements.size())) {
    return absl::InvalidArgumentError(StrCat("shape ", ShapeToString(shape), " needs ", *count,
                                             " BYTES elements, got ", elements.size()));
  }
  auto buffer = std::make_shared<std::string>();
  for (std::string_view element : elements) {
    if (element.size() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError("a BYTES element is longer than 4 GiB");
    }
    AppendBytesElement(element, *buffer);
  }
  void* data = buffer->data();
  const size_t size = buffer->size();
  return Tensor::Wrap(DataType::kBytes, std::move(shape), data, size, std::move(buffer));
}

}  // namespace inferd
