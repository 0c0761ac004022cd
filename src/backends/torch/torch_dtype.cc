#include "backends/torch/torch_dtype.h"

namespace inferd {

c10::ScalarType ToTorchType(DataType type) {
  switch (type) {
    case DataType::kBool:
      return c10::ScalarType::Bool;
    case DataType::kUint8:
      return c10::ScalarType::Byte;
    case DataType::kUint16:
      return c10::ScalarType::UInt16;
    case DataType::kUint32:
      return c10::ScalarType::UInt32;
    case DataType::kUint64:
      return c10::ScalarType::UInt64;
    case DataType::kInt8:
      return c10::ScalarType::Char;
    case DataType::kInt16:
      return c10::ScalarType::Short;
    case DataType::kInt32:
      return c10::ScalarType::Int;
    case DataType::kInt64:
      return c10::ScalarType::Long;
    case DataType::kFp16:
      return c10::ScalarType::Half;
    case DataType::kBf16:
      return c10::ScalarType::BFloat16;
    case DataType::kFp32:
      return c10::ScalarType::Float;
    case DataType::kFp64:
      return c10::ScalarType::Double;
    case DataType::kBytes:
      break;  // not a tensor element type: the backend passes BYTES as List[str]
  }
  return c10::ScalarType::Undefined;
}

std::optional<DataType> FromTorchType(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Bool:
      return DataType::kBool;
    case c10::ScalarType::Byte:
      return DataType::kUint8;
    case c10::ScalarType::UInt16:
      return DataType::kUint16;
    case c10::ScalarType::UInt32:
      return DataType::kUint32;
    case c10::ScalarType::UInt64:
      return DataType::kUint64;
    case c10::ScalarType::Char:
      return DataType::kInt8;
    case c10::ScalarType::Short:
      return DataType::kInt16;
    case c10::ScalarType::Int:
      return DataType::kInt32;
    case c10::ScalarType::Long:
      return DataType::kInt64;
    case c10::ScalarType::Half:
      return DataType::kFp16;
    case c10::ScalarType::BFloat16:
      return DataType::kBf16;
    case c10::ScalarType::Float:
      return DataType::kFp32;
    case c10::ScalarType::Double:
      return DataType::kFp64;
    default:
      return std::nullopt;
  }
}

}  // namespace inferd
