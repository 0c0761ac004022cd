#include "common/float16.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace inferd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Bit patterns and exact values that an IEEE half represents exactly.
struct ExactHalf {
  float value;
  uint16_t bits;
};

TEST(Float16Test, ExactHalvesRoundTrip) {
  const ExactHalf cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.5f, 0x3800},
      {65504.0f, 0x7bff},                  // largest finite half
      {std::ldexp(1.0f, -24), 0x0001},     // smallest subnormal
      {std::ldexp(1.0f, -14), 0x0400},     // smallest normal
      {std::ldexp(1023.0f, -24), 0x03ff},  // largest subnormal
      {kInf, 0x7c00},
      {-kInf, 0xfc00},
  };
  for (const ExactHalf& c : cases) {
    EXPECT_EQ(FloatToHalf(c.value), c.bits) << c.value;
    const float back = HalfToFloat(c.bits);
    EXPECT_EQ(std::bit_cast<uint32_t>(back), std::bit_cast<uint32_t>(c.value)) << c.value;
  }
}

TEST(Float16Test, EveryHalfSurvivesARoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float f = HalfToFloat(half);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f)))) << std::hex << bits;
      continue;
    }
    EXPECT_EQ(FloatToHalf(f), half) << std::hex << bits;
  }
}

TEST(Float16Test, RoundsToNearestEven) {
  // Between 1 and the next half (1 + 2^-10): the midpoint goes to the even one (1).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // Between 1 + 2^-10 (odd) and 1 + 2^-9 (even): the midpoint goes up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just past a midpoint rounds up; just below rounds down.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -20)), 0x3c00);
  // Subnormals: half the smallest subnormal is a tie with 0 (even); 1.5 units ties to 2.
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -24)), 0x0002);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  EXPECT_EQ(FloatToHalf(-std::ldexp(1.0f, -26)), 0x8000);  // underflows to -0
  // Rounding the largest subnormal up carries into the smallest normal.
  EXPECT_EQ(FloatToHalf(std::ldexp(1023.5f, -24)), 0x0400);
  // 0.1 is not exact: nearest half is 0x2e66.
  EXPECT_EQ(FloatToHalf(0.1f), 0x2e66);
}

TEST(Float16Test, OverflowsToInfinity) {
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);  // below the midpoint to 65536: stays finite
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // the midpoint ties to even: infinity
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e6f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::max()), 0x7c00);
}

TEST(Float16Test, NanStaysNan) {
  const uint16_t half = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(half & 0x7c00, 0x7c00);
  EXPECT_NE(half & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(HalfToFloat(half)));
  // A NaN whose payload sits only in the low float bits must not become infinity.
  const float low_payload_nan = std::bit_cast<float>(uint32_t{0x7f800001});
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(low_payload_nan))));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0xfc01)));
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 conversion is correctly rounded (round to nearest even); compare
// against it on a spread of float bit patterns covering every exponent.
TEST(Float16Test, MatchesCompilerConversionOnSampledFloats) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) {
    const float value = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(value)) continue;
    const uint16_t expected = std::bit_cast<uint16_t>(static_cast<_Float16>(value));
    ASSERT_EQ(FloatToHalf(value), expected) << std::hex << "float bits 0x" << bits;
  }
}
#endif

TEST(Bfloat16Test, ExactValuesRoundTrip) {
  const float cases[] = {0.0f,
                         -0.0f,
                         1.0f,
                         -2.5f,
                         256.0f,
                         std::ldexp(1.0f, -133),   // a subnormal float that bf16 holds
                         std::ldexp(1.0f, -126),   // smallest normal
                         std::ldexp(255.0f, 120),  // largest finite bf16
                         kInf,
                         -kInf};
  for (float value : cases) {
    const uint16_t bf16 = FloatToBf16(value);
    EXPECT_EQ(bf16, std::bit_cast<uint32_t>(value) >> 16) << value;
    EXPECT_EQ(std::bit_cast<uint32_t>(Bf16ToFloat(bf16)), std::bit_cast<uint32_t>(value)) << value;
  }
}

TEST(Bfloat16Test, RoundsToNearestEven) {
  // 1 + 2^-8 is the midpoint between 1 (even) and 1 + 2^-7: it goes down.
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is the midpoint between 1 + 2^-7 (odd) and 1 + 2^-6: it goes up.
  EXPECT_EQ(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(FloatToBf16(0.1f), 0x3dcd);
}

TEST(Bfloat16Test, OverflowsToInfinity) {
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(FloatToBf16(-std::numeric_limits<float>::max()), 0xff80);
}

TEST(Bfloat16Test, NanStaysNan) {
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::numeric_limits<float>::quiet_NaN()))));
  // Only the low 16 bits of the payload are set: truncation alone would give infinity.
  const float low_payload_nan = std::bit_cast<float>(uint32_t{0x7f800001});
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(low_payload_nan))));
  const float negative_nan = std::bit_cast<float>(uint32_t{0xffffffff});
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(negative_nan))));
}

}  // namespace
}  // namespace inferd
