#include "frontends/http/codecs/json_tensor_codec.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "common/float16.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string Excerpt(element value) {
  std::string text = simdjson::minify(value);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Converts JSON leaves to the tensor's element type and stores them at `out`, in order.
//
// With an expected shape (nested data) it also checks, in the same pass, that every list has
// the length that shape gives at its depth; without one (flat data) any nesting is accepted
// and only the total count must match. Both run once per request on an I/O thread, so the
// innermost lists, which hold nearly every element, go through a loop typed per datatype.
class LeafWriter {
 public:
  LeafWriter(DataType type, std::byte* out, int64_t capacity, std::string_view what,
             const Shape* expected_shape = nullptr)
      : type_(type), out_(out), capacity_(capacity), what_(what), shape_(expected_shape) {}

  absl::Status Write(element value) { return Write(value, 0); }

  int64_t count() const { return count_; }

 private:
  absl::Status Write(element value, size_t depth) {
    if (value.type() != element_type::ARRAY) {
      if (shape_ != nullptr && depth != shape_->size()) return Ragged(depth);
      return StoreOne(value);
    }
    if (shape_ != nullptr && depth == shape_->size()) {
      return absl::InvalidArgumentError(StrCat(what_, ": the nested lists are ragged (deeper than ",
                                               ShapeToString(*shape_), " at one element)"));
    }
    const simdjson::dom::array array = value.get_array().value_unsafe();
    if (shape_ != nullptr && static_cast<int64_t>(array.size()) != (*shape_)[depth]) {
      return Ragged(depth);
    }
    const bool innermost = shape_ != nullptr && depth + 1 == shape_->size();
    if (innermost && count_ + static_cast<int64_t>(array.size()) <= capacity_) {
      return WriteRow(array);
    }
    for (element child : array) RETURN_IF_ERROR(Write(child, depth + 1));
    return absl::OkStatus();
  }

  absl::Status Ragged(size_t depth) const {
    return absl::InvalidArgumentError(StrCat(
        what_, ": the nested lists are ragged (expected ", (*shape_)[depth], " elements at depth ",
        depth, " as the first row has, shape ", ShapeToString(*shape_), ")"));
  }

  absl::Status StoreOne(element value) {
    if (count_ >= capacity_) {
      ++count_;  // keep counting so the error can say how many elements there were
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(Store(value));
    ++count_;
    return absl::OkStatus();
  }

  // A list of leaves that fits in the tensor. FP32, by far the most common input, skips the
  // per-element dispatch on the datatype.
  absl::Status WriteRow(const simdjson::dom::array& array) {
    if (type_ != DataType::kFp32) {
      for (element child : array) RETURN_IF_ERROR(StoreLeaf(child));
      return absl::OkStatus();
    }
    float* out = reinterpret_cast<float*>(out_) + count_;
    for (element child : array) {
      double v;
      switch (child.type()) {
        case element_type::DOUBLE:
          v = child.get_double().value_unsafe();
          break;
        case element_type::INT64:
          v = static_cast<double>(child.get_int64().value_unsafe());
          break;
        case element_type::UINT64:
          v = static_cast<double>(child.get_uint64().value_unsafe());
          break;
        default:
          return StoreLeaf(child);  // not a number: Store words the error
      }
      if (std::fabs(v) > std::numeric_limits<float>::max() && std::isfinite(v)) {
        return StoreLeaf(child);  // out of range: Store words the error
      }
      *out++ = static_cast<float>(v);
      ++count_;
    }
    return absl::OkStatus();
  }

  // One element of an innermost list: it must be a leaf.
  absl::Status StoreLeaf(element value) {
    if (value.type() == element_type::ARRAY) {
      return absl::InvalidArgumentError(StrCat(what_, ": the nested lists are ragged (deeper than ",
                                               ShapeToString(*shape_), " at one element)"));
    }
    return StoreOne(value);
  }

  absl::Status Bad(element value, std::string_view expected) const {
    return absl::InvalidArgumentError(StrCat(what_, ": element ", count_, " is ", Excerpt(value),
                                             ", but ", DataTypeName(type_), " data must be ",
                                             expected));
  }

  template <typename T>
  absl::Status StoreInteger(element value) {
    constexpr std::string_view kExpected = "integers in range";
    T result;
    if (value.type() == element_type::INT64) {
      const int64_t v = value.get_int64().value_unsafe();
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<uint64_t>(v) > std::numeric_limits<T>::max())) {
        return Bad(value, kExpected);
      }
      result = static_cast<T>(v);
    } else if (value.type() == element_type::UINT64) {
      const uint64_t v = value.get_uint64().value_unsafe();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return Bad(value, kExpected);
      result = static_cast<T>(v);
    } else {
      return Bad(value, "integers");
    }
    std::memcpy(out_ + count_ * sizeof(T), &result, sizeof(T));
    return absl::OkStatus();
  }

  absl::StatusOr<double> Number(element value) const {
    switch (value.type()) {
      case element_type::DOUBLE:
        return value.get_double().value_unsafe();
      case element_type::INT64:
        return static_cast<double>(value.get_int64().value_unsafe());
      case element_type::UINT64:
        return static_cast<double>(value.get_uint64().value_unsafe());
      default:
        return Bad(value, "numbers");
    }
  }

  // A finite number beyond the datatype's range would become infinity (and converting it is
  // undefined behaviour in C++): refuse it instead.
  absl::StatusOr<float> FloatInRange(element value, double limit,
                                     std::string_view limit_text) const {
    ASSIGN_OR_RETURN(double v, Number(value));
    if (std::isfinite(v) && std::fabs(v) > limit) {
      return Bad(value, StrCat("numbers of magnitude at most ", limit_text));
    }
    return static_cast<float>(v);
  }

  template <typename T>
  void Put(T v) {
    std::memcpy(out_ + count_ * sizeof(T), &v, sizeof(T));
  }

  absl::Status Store(element value) {
    switch (type_) {
      case DataType::kBool:
        if (value.type() != element_type::BOOL) return Bad(value, "true or false");
        Put<uint8_t>(value.get_bool().value_unsafe() ? 1 : 0);
        return absl::OkStatus();
      case DataType::kUint8:
        return StoreInteger<uint8_t>(value);
      case DataType::kUint16:
        return StoreInteger<uint16_t>(value);
      case DataType::kUint32:
        return StoreInteger<uint32_t>(value);
      case DataType::kUint64:
        return StoreInteger<uint64_t>(value);
      case DataType::kInt8:
        return StoreInteger<int8_t>(value);
      case DataType::kInt16:
        return StoreInteger<int16_t>(value);
      case DataType::kInt32:
        return StoreInteger<int32_t>(value);
      case DataType::kInt64:
        return StoreInteger<int64_t>(value);
      case DataType::kFp16: {
        ASSIGN_OR_RETURN(float v, FloatInRange(value, 65504.0, "65504"));
        Put<uint16_t>(FloatToHalf(v));
        return absl::OkStatus();
      }
      case DataType::kBf16: {
        ASSIGN_OR_RETURN(float v,
                         FloatInRange(value, std::numeric_limits<float>::max(), "3.4028235e38"));
        Put<uint16_t>(FloatToBf16(v));
        return absl::OkStatus();
      }
      case DataType::kFp32: {
        ASSIGN_OR_RETURN(float v,
                         FloatInRange(value, std::numeric_limits<float>::max(), "3.4028235e38"));
        Put<float>(v);
        return absl::OkStatus();
      }
      case DataType::kFp64: {
        ASSIGN_OR_RETURN(double v, Number(value));
        Put<double>(v);
        return absl::OkStatus();
      }
      case DataType::kBytes:
        break;  // DecodeBytesData reads BYTES
    }
    return absl::InternalError("unhandled datatype");
  }

  const DataType type_;
  std::byte* const out_;
  const int64_t capacity_;
  const std::string_view what_;
  const Shape* const shape_;
  int64_t count_ = 0;
};

int64_t CountLeaves(element value) {
  if (value.type() != element_type::ARRAY) return 1;
  int64_t count = 0;
  const simdjson::dom::array array = value.get_array().value_unsafe();
  for (element child : array) count += CountLeaves(child);
  return count;
}

template <typename T>
void WriteValue(T v, JsonWriter& writer) {
  if constexpr (std::is_same_v<T, bool>) {
    writer.Bool(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) {
      writer.Double(static_cast<double>(v));  // NaN / Infinity / -Infinity
      return;
    }
    char text[32];
    auto [end, ec] = std::to_chars(text, text + sizeof(text), v);
    writer.RawValue(text, end - text, rapidjson::kNumberType);
  } else if constexpr (std::is_signed_v<T>) {
    writer.Int64(v);
  } else {
    writer.Uint64(v);
  }
}

void WriteElement(const Tensor& tensor, int64_t index, JsonWriter& writer) {
  const std::byte* p = tensor.data();
  switch (tensor.type()) {
    case DataType::kBool:
      return WriteValue<bool>(reinterpret_cast<const uint8_t*>(p)[index] != 0, writer);
    case DataType::kUint8:
      return WriteValue<uint64_t>(reinterpret_cast<const uint8_t*>(p)[index], writer);
    case DataType::kUint16:
      return WriteValue<uint64_t>(reinterpret_cast<const uint16_t*>(p)[index], writer);
    case DataType::kUint32:
      return WriteValue<uint64_t>(reinterpret_cast<const uint32_t*>(p)[index], writer);
    case DataType::kUint64:
      return WriteValue<uint64_t>(reinterpret_cast<const uint64_t*>(p)[index], writer);
    case DataType::kInt8:
      return WriteValue<int64_t>(reinterpret_cast<const int8_t*>(p)[index], writer);
    case DataType::kInt16:
      return WriteValue<int64_t>(reinterpret_cast<const int16_t*>(p)[index], writer);
    case DataType::kInt32:
      return WriteValue<int64_t>(reinterpret_cast<const int32_t*>(p)[index], writer);
    case DataType::kInt64:
      return WriteValue<int64_t>(reinterpret_cast<const int64_t*>(p)[index], writer);
    case DataType::kFp16:
      return WriteValue<float>(HalfToFloat(reinterpret_cast<const uint16_t*>(p)[index]), writer);
    case DataType::kBf16:
      return WriteValue<float>(Bf16ToFloat(reinterpret_cast<const uint16_t*>(p)[index]), writer);
    case DataType::kFp32:
      return WriteValue<float>(reinterpret_cast<const float*>(p)[index], writer);
    case DataType::kFp64:
      return WriteValue<double>(reinterpret_cast<const double*>(p)[index], writer);
    case DataType::kBytes: {
      const std::string_view text = BytesElements(tensor)[static_cast<size_t>(index)];
      writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
      return;
    }
  }
}

// `nested`: the data must be nested lists of exactly `shape` (DecodeNestedTensor derived it
// from the first element at each depth); otherwise any nesting with the right count will do.
absl::StatusOr<Tensor> Decode(element data, DataType type, Shape shape, bool nested,
                              std::string_view what, int64_t max_elements) {
  ASSIGN_OR_RETURN(int64_t expected, ElementCount(shape));
  if (expected > max_elements) {
    // The data cannot match; count it (only on this error path) to say by how much.
    return absl::InvalidArgumentError(StrCat(what, ": shape ", ShapeToString(shape), " needs ",
                                             expected, " elements, but data has ",
                                             CountLeaves(data)));
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateForOverwrite(type, shape));
  LeafWriter writer(type, tensor.mutable_data(), expected, what, nested ? &shape : nullptr);
  RETURN_IF_ERROR(writer.Write(data));
  if (writer.count() != expected) {
    return absl::InvalidArgumentError(StrCat(what, ": shape ", ShapeToString(shape), " needs ",
                                             expected, " elements, but data has ", writer.count()));
  }
  return tensor;
}

// For BYTES, which LeafWriter does not write: every list must have the length the first
// element at its depth has.
absl::Status CheckRectangular(element value, const Shape& shape, size_t depth,
                              std::string_view what) {
  if (depth == shape.size()) {
    if (value.type() == element_type::ARRAY) {
      return absl::InvalidArgumentError(StrCat(what, ": the nested lists are ragged (deeper than ",
                                               ShapeToString(shape), " at one element)"));
    }
    return absl::OkStatus();
  }
  simdjson::dom::array array;
  if (value.get(array) || static_cast<int64_t>(array.size()) != shape[depth]) {
    return absl::InvalidArgumentError(StrCat(
        what, ": the nested lists are ragged (expected ", shape[depth], " elements at depth ",
        depth, " as the first row has, shape ", ShapeToString(shape), ")"));
  }
  for (element child : array) RETURN_IF_ERROR(CheckRectangular(child, shape, depth + 1, what));
  return absl::OkStatus();
}

// BYTES over JSON: each element is a JSON string, nested or flat in row-major order.
// A BYTES element is a JSON string, or TF-Serving's {"b64": "<base64>"} for binary data
// (images) that JSON strings cannot carry; decoded bytes live in `decoded` (a deque: the
// views into earlier elements stay valid as it grows).
absl::Status CollectStrings(element value, std::vector<std::string_view>& out,
                            std::deque<std::string>& decoded, std::string_view what) {
  if (value.type() == element_type::ARRAY) {
    const simdjson::dom::array array = value.get_array().value_unsafe();
    for (element child : array) RETURN_IF_ERROR(CollectStrings(child, out, decoded, what));
    return absl::OkStatus();
  }
  if (value.type() == element_type::OBJECT) {
    simdjson::dom::object object = value.get_object().value_unsafe();
    std::string_view encoded;
    if (object.size() != 1 || object["b64"].get(encoded)) {
      return absl::InvalidArgumentError(
          StrCat(what, ": element ", out.size(), " is ", Excerpt(value),
                 "; a BYTES element is a string or {\"b64\": \"<base64>\"}"));
    }
    std::string& bytes = decoded.emplace_back();
    if (!absl::Base64Unescape(absl::string_view(encoded.data(), encoded.size()), &bytes)) {
      return absl::InvalidArgumentError(
          StrCat(what, ": element ", out.size(), ": \"b64\" is not valid base64"));
    }
    out.push_back(bytes);
    return absl::OkStatus();
  }
  std::string_view text;
  if (value.get(text)) {
    return absl::InvalidArgumentError(StrCat(what, ": element ", out.size(), " is ", Excerpt(value),
                                             ", but BYTES data must be strings"));
  }
  out.push_back(text);
  return absl::OkStatus();
}

absl::StatusOr<Tensor> DecodeBytesData(element data, Shape shape, std::string_view what) {
  std::vector<std::string_view> elements;
  std::deque<std::string> decoded;
  RETURN_IF_ERROR(CollectStrings(data, elements, decoded, what));
  ASSIGN_OR_RETURN(int64_t expected, ElementCount(shape));
  if (static_cast<int64_t>(elements.size()) != expected) {
    return absl::InvalidArgumentError(StrCat(what, ": shape ", ShapeToString(shape), " needs ",
                                             expected, " elements, but data has ",
                                             elements.size()));
  }
  return MakeBytesTensor(std::move(shape), elements);
}

}  // namespace

absl::StatusOr<Tensor> DecodeTensorData(element data, DataType type, Shape shape,
                                        std::string_view what, int64_t max_elements) {
  if (type == DataType::kBytes) return DecodeBytesData(data, std::move(shape), what);
  return Decode(data, type, std::move(shape), /*nested=*/false, what, max_elements);
}

absl::StatusOr<Tensor> DecodeNestedTensor(element data, DataType type, std::string_view what,
                                          int64_t max_elements) {
  Shape shape;
  for (element e = data; e.type() == element_type::ARRAY;) {
    simdjson::dom::array array = e.get_array().value_unsafe();
    shape.push_back(static_cast<int64_t>(array.size()));
    if (array.size() == 0) break;
    e = array.at(0).value_unsafe();
  }
  if (type == DataType::kBytes) {
    RETURN_IF_ERROR(CheckRectangular(data, shape, 0, what));
    return DecodeBytesData(data, std::move(shape), what);
  }
  return Decode(data, type, std::move(shape), /*nested=*/true, what, max_elements);
}

void WriteFlatData(const Tensor& tensor, JsonWriter& writer) {
  writer.StartArray();
  if (tensor.type() == DataType::kBytes) {
    for (std::string_view text : BytesElements(tensor)) {
      writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    }
    writer.EndArray();
    return;
  }
  for (int64_t i = 0; i < tensor.element_count(); ++i) WriteElement(tensor, i, writer);
  writer.EndArray();
}

void WriteNestedData(const Tensor& tensor, std::span<const int64_t> shape, int64_t offset,
                     JsonWriter& writer) {
  if (shape.empty()) {
    WriteElement(tensor, offset, writer);
    return;
  }
  int64_t stride = 1;
  for (size_t i = 1; i < shape.size(); ++i) stride *= shape[i];
  writer.StartArray();
  for (int64_t i = 0; i < shape[0]; ++i) {
    WriteNestedData(tensor, shape.subspan(1), offset + i * stride, writer);
  }
  writer.EndArray();
}

}  // namespace inferd
