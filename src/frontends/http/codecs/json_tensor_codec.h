// Tensor data <-> JSON arrays, for every datatype (BYTES elements are JSON strings).
//
// Reading writes each JSON leaf straight into the tensor's buffer (no intermediate vector);
// writing prints floats with the shortest text that reads back to the same value.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_JSON_TENSOR_CODEC_H_
#define INFERD_FRONTENDS_HTTP_CODECS_JSON_TENSOR_CODEC_H_

#include <span>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>

#include "absl/status/statusor.h"
#include "core/types/tensor.h"

namespace inferd {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

// Decodes `data` (flat, or nested in any way) into a tensor of `type` and `shape`. The
// number of leaves must equal the shape's element count. `what` names the tensor in errors
// ("input 'features'"). A shape of more than `max_elements` elements is refused before
// anything is allocated (a JSON body of N bytes cannot hold more than N numbers).
absl::StatusOr<Tensor> DecodeTensorData(simdjson::dom::element data, DataType type, Shape shape,
                                        std::string_view what, int64_t max_elements);

// Decodes a rectangular nested list, taking the shape from the nesting ([[1,2],[3,4]] is
// [2,2]; a bare number is a scalar of shape []).
absl::StatusOr<Tensor> DecodeNestedTensor(simdjson::dom::element data, DataType type,
                                          std::string_view what, int64_t max_elements);

// A JSON string of `text`'s bytes (which need not end in a NUL).
inline void WriteString(JsonWriter& writer, std::string_view text) {
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

// Writes the elements as one flat array.
void WriteFlatData(const Tensor& tensor, JsonWriter& writer);

// Writes elements [offset, offset + product(shape)) nested to `shape` (a scalar for []).
void WriteNestedData(const Tensor& tensor, std::span<const int64_t> shape, int64_t offset,
                     JsonWriter& writer);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_JSON_TENSOR_CODEC_H_
