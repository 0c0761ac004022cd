// Tensor element types, named as the KServe v2 protocol names them.
#ifndef INFERD_CORE_TYPES_DATA_TYPE_H_
#define INFERD_CORE_TYPES_DATA_TYPE_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace inferd {

enum class DataType {
  kBool,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFp16,
  kBf16,
  kFp32,
  kFp64,
  // Variable-length byte strings. A BYTES tensor's buffer holds its elements serialized as the
  // binary protocol sends them: per element a 4-byte little-endian length, then the bytes
  // (core/types/bytes_tensor.h reads and writes them).
  kBytes,
};

// "FP32" -> kFp32; nullopt for anything that is not a protocol datatype name.
std::optional<DataType> ParseDataType(std::string_view name);

// kFp32 -> "FP32".
std::string_view DataTypeName(DataType type);

// Bytes per element (BOOL is one byte); 0 for BYTES, whose elements vary in size.
size_t DataTypeSize(DataType type);

bool IsIntegerType(DataType type);
bool IsFloatType(DataType type);

// The comma-separated list of every datatype name, for error messages.
std::string_view AllDataTypeNames();

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_DATA_TYPE_H_
