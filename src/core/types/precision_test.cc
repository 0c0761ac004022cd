#include "core/types/precision.h"

#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(PrecisionTest, ParsesEveryNameItPrints) {
  for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kBf16, Precision::kInt8}) {
    EXPECT_EQ(ParsePrecision(PrecisionName(p)), p);
  }
}

TEST(PrecisionTest, RejectsUnknownAndUppercaseNames) {
  EXPECT_EQ(ParsePrecision("FP32"), std::nullopt);
  EXPECT_EQ(ParsePrecision("int4"), std::nullopt);
  EXPECT_EQ(ParsePrecision(""), std::nullopt);
}

}  // namespace
}  // namespace inferd
