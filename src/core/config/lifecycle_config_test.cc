#include "core/config/lifecycle_config_yaml.h"

#include <string>

#include "core/config/model_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kBase[] = R"(backend: torch
inputs: [{name: x, datatype: FP32, dims: [1]}]
outputs: [{name: y, datatype: FP32, dims: [1]}]
)";

absl::StatusOr<ModelConfig> Parse(const std::string& extra) {
  return ParseModelConfig(std::string(kBase) + extra, "m", "m/config.yaml");
}

std::string ErrorOf(const std::string& extra) {
  absl::StatusOr<ModelConfig> config = Parse(extra);
  EXPECT_FALSE(config.ok()) << extra;
  return config.ok() ? "" : std::string(config.status().message());
}

TEST(LifecycleConfigTest, DefaultsAreEagerUnpinnedLatestOne) {
  absl::StatusOr<ModelConfig> config = Parse("");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->lifecycle.version_policy.kind, VersionPolicy::Kind::kLatest);
  EXPECT_EQ(config->lifecycle.version_policy.latest, 1);
  EXPECT_FALSE(config->lifecycle.lazy);
  EXPECT_FALSE(config->lifecycle.pin);
  EXPECT_EQ(config->lifecycle.idle_unload_s, 0);
}

TEST(LifecycleConfigTest, ParsesEveryField) {
  absl::StatusOr<ModelConfig> config = Parse(R"(version_policy: {specific: [3, 1]}
load: lazy
pin: true
idle_unload_s: 60
sha256: {1: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08}
labels: {stable: 1, canary: 3}
traffic: {stable: 90, canary: 10}
)");
  ASSERT_TRUE(config.ok()) << config.status();
  const LifecycleConfig& lc = config->lifecycle;
  EXPECT_EQ(lc.version_policy.kind, VersionPolicy::Kind::kSpecific);
  EXPECT_THAT(lc.version_policy.specific, ElementsAre(1, 3));
  EXPECT_TRUE(lc.lazy);
  EXPECT_TRUE(lc.pin);
  EXPECT_EQ(lc.idle_unload_s, 60);
  EXPECT_THAT(
      lc.sha256,
      ElementsAre(Pair(1, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")));
  EXPECT_THAT(lc.traffic.labels, ElementsAre(Pair("canary", 3), Pair("stable", 1)));
  EXPECT_THAT(lc.traffic.weights, ElementsAre(Pair("stable", 90), Pair("canary", 10)));
}

TEST(LifecycleConfigTest, AcceptsAllAndLatestN) {
  EXPECT_EQ(Parse("version_policy: all\n")->lifecycle.version_policy.kind,
            VersionPolicy::Kind::kAll);
  EXPECT_EQ(Parse("version_policy: {latest: 2}\n")->lifecycle.version_policy.latest, 2);
  EXPECT_TRUE(Parse("version_swap: resource_preserving\n")->lifecycle.resource_preserving);
}

TEST(LifecycleConfigTest, RejectsBadValuesNamingTheField) {
  EXPECT_THAT(ErrorOf("version_policy: newest\n"), HasSubstr("version_policy: must be `all`"));
  EXPECT_THAT(ErrorOf("version_policy: {latest: 0}\n"), HasSubstr("version_policy.latest"));
  EXPECT_THAT(ErrorOf("load: later\n"), HasSubstr("load: must be `eager`"));
  EXPECT_THAT(ErrorOf("version_swap: fast\n"), HasSubstr("version_swap: must be"));
  EXPECT_THAT(ErrorOf("pin: yes\n"), HasSubstr("pin: must be true or false"));
  EXPECT_THAT(ErrorOf("sha256: {1: abc}\n"), HasSubstr("sha256.1: must be 64 hexadecimal"));
  EXPECT_THAT(ErrorOf("labels: {stable: one}\n"), HasSubstr("labels.stable: must be a version"));
  EXPECT_THAT(ErrorOf("traffic: {nightly: 5}\n"), HasSubstr("traffic.nightly: is neither"));
  EXPECT_THAT(ErrorOf("traffic: {1: 0}\n"), HasSubstr("traffic.1: must be in 1.."));
}

}  // namespace
}  // namespace inferd
