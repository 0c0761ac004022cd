#include "core/types/data_type.h"

#include <array>
#include <utility>

namespace inferd {
namespace {

struct TypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
};

constexpr std::array<TypeInfo, 14> kTypes = {{
    {DataType::kBool, "BOOL", 1},
    {DataType::kUint8, "UINT8", 1},
    {DataType::kUint16, "UINT16", 2},
    {DataType::kUint32, "UINT32", 4},
    {DataType::kUint64, "UINT64", 8},
    {DataType::kInt8, "INT8", 1},
    {DataType::kInt16, "INT16", 2},
    {DataType::kInt32, "INT32", 4},
    {DataType::kInt64, "INT64", 8},
    {DataType::kFp16, "FP16", 2},
    {DataType::kBf16, "BF16", 2},
    {DataType::kFp32, "FP32", 4},
    {DataType::kFp64, "FP64", 8},
    {DataType::kBytes, "BYTES", 0},
}};

const TypeInfo& Info(DataType type) { return kTypes[static_cast<size_t>(type)]; }

}  // namespace

std::optional<DataType> ParseDataType(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

std::string_view DataTypeName(DataType type) { return Info(type).name; }

size_t DataTypeSize(DataType type) { return Info(type).size; }

bool IsIntegerType(DataType type) { return type >= DataType::kUint8 && type <= DataType::kInt64; }

bool IsFloatType(DataType type) { return type >= DataType::kFp16 && type <= DataType::kFp64; }

std::string_view AllDataTypeNames() {
  return "BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, "
         "FP64, BYTES";
}

}  // namespace inferd
