#include "core/config/adapter_config.h"

#include <string>

#include "absl/status/status.h"
#include "core/config/model_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<ModelConfig> Parse(const std::string& adapters,
                                  const std::string& backend = "llama") {
  return ParseModelConfig("backend: " + backend + "\nadapters:\n" + adapters, "m",
                          "models/m/config.yaml");
}

std::string ErrorOf(const std::string& adapters, const std::string& backend = "llama") {
  absl::StatusOr<ModelConfig> config = Parse(adapters, backend);
  EXPECT_FALSE(config.ok()) << adapters;
  return config.ok() ? "" : std::string(config.status().message());
}

TEST(AdapterConfigTest, ReadsNamesPathsAndScales) {
  absl::StatusOr<ModelConfig> config = Parse(
      "  - {name: tone, path: adapters/tone.gguf}\n"
      "  - {name: terse, path: terse.gguf, scale: -0.5}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->adapters.size(), 2u);
  EXPECT_EQ(config->adapters[0].name, "tone");
  EXPECT_EQ(config->adapters[0].path, "adapters/tone.gguf");
  EXPECT_EQ(config->adapters[0].scale, 1.0);
  EXPECT_EQ(config->adapters[1].scale, -0.5);
  EXPECT_EQ(config->FindAdapter("terse"), &config->adapters[1]);
  EXPECT_EQ(config->FindAdapter("nosuch"), nullptr);
}

TEST(AdapterConfigTest, RefusesWhatCouldNotBeServed) {
  EXPECT_THAT(ErrorOf("  - {name: a, path: a.gguf}\n", "torch"), HasSubstr("backend: llama only"));
  EXPECT_THAT(ErrorOf("  - {name: 'a:b', path: a.gguf}\n"), HasSubstr("adapters[0].name"));
  EXPECT_THAT(ErrorOf("  - {name: a/b, path: a.gguf}\n"), HasSubstr("adapters[0].name"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: a.gguf}\n  - {name: a, path: b.gguf}\n"),
              HasSubstr("declared twice"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: ../b.gguf}\n"), HasSubstr("adapters[0].path"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: /etc/passwd}\n"), HasSubstr("adapters[0].path"));
  EXPECT_THAT(ErrorOf("  - {name: a}\n"), HasSubstr("adapters[0].path: is required"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: a.gguf, scale: 4.5}\n"), HasSubstr("adapters[0].scale"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: a.gguf, scale: .nan}\n"),
              HasSubstr("adapters[0].scale"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: a.gguf, scale: -4.01}\n"), HasSubstr("finite number"));
  EXPECT_THAT(ErrorOf("  - {name: a, path: a.gguf, alpha: 2}\n"), HasSubstr("alpha"));
  EXPECT_THAT(ErrorOf("  {name: a, path: a.gguf}\n"), HasSubstr("must be a list"));
  std::string many;
  for (size_t i = 0; i <= kMaxAdapters; ++i) {
    many += "  - {name: a" + std::to_string(i) + ", path: a.gguf}\n";
  }
  EXPECT_THAT(ErrorOf(many), HasSubstr("at most 64"));
}

TEST(AdapterConfigTest, SplitsARequestsModelAtItsLastColon) {
  auto split = SplitAdapterName("smollm2:tone");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->base, "smollm2");
  EXPECT_EQ(split->adapter, "tone");
  split = SplitAdapterName("M@1:x:tone");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->base, "M@1:x");
  EXPECT_FALSE(SplitAdapterName("smollm2").has_value());
  EXPECT_FALSE(SplitAdapterName(":tone").has_value());
  EXPECT_FALSE(SplitAdapterName("smollm2:").has_value());
}

}  // namespace
}  // namespace inferd
