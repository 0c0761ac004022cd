#include "backends/onnx/onnx_dtype.h"

#include "common/strings.h"

namespace inferd {
namespace {

struct TypePair {
  ONNXTensorElementDataType onnx;
  DataType type;
  const char* onnx_name;
};

constexpr TypePair kPairs[] = {
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, DataType::kBool, "bool"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, DataType::kUint8, "uint8"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, DataType::kUint16, "uint16"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, DataType::kUint32, "uint32"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, DataType::kUint64, "uint64"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, DataType::kInt8, "int8"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, DataType::kInt16, "int16"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, DataType::kInt32, "int32"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, DataType::kInt64, "int64"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, DataType::kFp16, "float16"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, DataType::kBf16, "bfloat16"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, DataType::kFp32, "float"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, DataType::kFp64, "double"},
};

}  // namespace

std::optional<DataType> FromOnnxType(ONNXTensorElementDataType type) {
  for (const TypePair& pair : kPairs) {
    if (pair.onnx == type) return pair.type;
  }
  return std::nullopt;
}

ONNXTensorElementDataType ToOnnxType(DataType type) {
  for (const TypePair& pair : kPairs) {
    if (pair.type == type) return pair.onnx;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

std::string OnnxTypeName(ONNXTensorElementDataType type) {
  for (const TypePair& pair : kPairs) {
    if (pair.onnx == type) return pair.onnx_name;
  }
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) return "string";
  return StrCat("element type ", static_cast<int>(type));
}

}  // namespace inferd
