// config.yaml `precision:` parsing (the backends check which precisions they can serve).
#include <string>

#include "core/config/model_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

constexpr char kBase[] = R"(
backend: onnx
inputs:
  - {name: x, datatype: FP32, dims: [4]}
outputs:
  - {name: y, datatype: FP32, dims: [1]}
)";

TEST(ModelConfigPrecisionTest, DefaultsToFp32) {
  absl::StatusOr<ModelConfig> config = ParseModelConfig(kBase, "m", "m/config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->precision, Precision::kFp32);
}

TEST(ModelConfigPrecisionTest, ParsesInt8) {
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig(std::string(kBase) + "precision: int8\n", "m", "m/config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->precision, Precision::kInt8);
}

TEST(ModelConfigPrecisionTest, RejectsUnknownPrecisionNamingFieldAndChoices) {
  absl::StatusOr<ModelConfig> config =
      ParseModelConfig(std::string(kBase) + "precision: int4\n", "m", "m/config.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("m/config.yaml: precision: 'int4' is not a precision (known: fp32, fp16, "
                        "bf16, int8)"));
}

}  // namespace
}  // namespace inferd
