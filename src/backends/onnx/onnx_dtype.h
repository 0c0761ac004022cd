// ONNX tensor element types <-> the protocol's datatypes.
#ifndef INFERD_BACKENDS_ONNX_ONNX_DTYPE_H_
#define INFERD_BACKENDS_ONNX_ONNX_DTYPE_H_

#include <onnxruntime_c_api.h>

#include <optional>
#include <string>

#include "core/types/data_type.h"

namespace inferd {

// nullopt for element types the protocol cannot carry (strings, complex, float8, int4).
std::optional<DataType> FromOnnxType(ONNXTensorElementDataType type);
ONNXTensorElementDataType ToOnnxType(DataType type);
// "float", "int64", ..., for error messages.
std::string OnnxTypeName(ONNXTensorElementDataType type);

}  // namespace inferd

#endif  // INFERD_BACKENDS_ONNX_ONNX_DTYPE_H_
