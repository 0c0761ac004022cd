// The numeric precision a model is served in (config.yaml `precision:`).
//
// The core only names and parses the value; each backend decides which precisions it can
// run on which device and rejects the rest at load with a message that says what to do.
#ifndef INFERD_CORE_TYPES_PRECISION_H_
#define INFERD_CORE_TYPES_PRECISION_H_

#include <optional>
#include <string_view>

namespace inferd {

enum class Precision {
  kFp32,  // the model as exported (the default)
  kFp16,
  kBf16,
  kInt8,  // a quantized model file (tools/optimize/quantize.py writes them)
};

// "int8" -> kInt8; nullopt for anything else.
std::optional<Precision> ParsePrecision(std::string_view name);

// kInt8 -> "int8".
std::string_view PrecisionName(Precision precision);

// "fp32, fp16, bf16, int8", for error messages.
std::string_view AllPrecisionNames();

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_PRECISION_H_
