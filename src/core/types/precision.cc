#include "core/types/precision.h"

namespace inferd {

std::optional<Precision> ParsePrecision(std::string_view name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "fp16") return Precision::kFp16;
  if (name == "bf16") return Precision::kBf16;
  if (name == "int8") return Precision::kInt8;
  return std::nullopt;
}

std::string_view PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kInt8:
      return "int8";
  }
  return "fp32";
}

std::string_view AllPrecisionNames() { return "fp32, fp16, bf16, int8"; }

}  // namespace inferd
