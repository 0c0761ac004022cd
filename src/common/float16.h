// IEEE half (FP16) and bfloat16 conversions for the JSON codec, which reads and writes
// those datatypes as ordinary numbers. Round to nearest even, as hardware does.
#ifndef INFERD_COMMON_FLOAT16_H_
#define INFERD_COMMON_FLOAT16_H_

#include <bit>
#include <cstdint>

namespace inferd {

inline uint16_t FloatToBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // keep NaN a (quiet) NaN
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float Bf16ToFloat(uint16_t value) {
  return std::bit_cast<float>(static_cast<uint32_t>(value) << 16);
}

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t value);

}  // namespace inferd

#endif  // INFERD_COMMON_FLOAT16_H_
