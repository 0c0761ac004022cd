#include "core/config/traffic_rules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TrafficRules Canary() {
  TrafficRules rules;
  rules.labels = {{"stable", 1}, {"canary", 2}};
  rules.weights = {{"stable", 90}, {"canary", 10}};
  return rules;
}

TEST(TrafficRulesTest, ResolvesLabelsAndVersionNumbers) {
  const TrafficRules rules = Canary();
  EXPECT_THAT(ResolveTrafficTarget(rules, "canary"), Optional(int64_t{2}));
  EXPECT_THAT(ResolveTrafficTarget(rules, "7"), Optional(int64_t{7}));
  EXPECT_EQ(ResolveTrafficTarget(rules, "nightly"), std::nullopt);
}

TEST(TrafficRulesTest, SplitsByWeight) {
  const TrafficRules rules = Canary();
  EXPECT_THAT(PickWeightedVersion(rules, 0.0), Optional(int64_t{1}));
  EXPECT_THAT(PickWeightedVersion(rules, 0.8999), Optional(int64_t{1}));
  EXPECT_THAT(PickWeightedVersion(rules, 0.9001), Optional(int64_t{2}));
  EXPECT_THAT(PickWeightedVersion(rules, 0.99999), Optional(int64_t{2}));
  int canary = 0;
  for (int i = 0; i < 1000; ++i) canary += *PickWeightedVersion(rules, i / 1000.0) == 2;
  EXPECT_EQ(canary, 100);
}

TEST(TrafficRulesTest, NoWeightsMeansNoSplit) {
  TrafficRules rules;
  rules.labels = {{"stable", 1}};
  EXPECT_EQ(PickWeightedVersion(rules, 0.5), std::nullopt);
}

TEST(TrafficRulesTest, BlueGreenIsALabelSwitch) {
  TrafficRules rules;
  rules.labels = {{"live", 1}};
  rules.weights = {{"live", 1}};
  EXPECT_THAT(PickWeightedVersion(rules, 0.3), Optional(int64_t{1}));
  rules.labels["live"] = 2;
  EXPECT_THAT(PickWeightedVersion(rules, 0.3), Optional(int64_t{2}));
}

TEST(TrafficRulesTest, RejectsLabelsOnVersionsThatAreNotLoaded) {
  const absl::Status status = ValidateTrafficRules(Canary(), {1});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'canary' points at version 2"));
  EXPECT_TRUE(ValidateTrafficRules(Canary(), {1, 2}).ok());
}

TEST(TrafficRulesTest, RejectsUnknownTargetsAndNonPositiveWeights) {
  TrafficRules rules;
  rules.weights = {{"nightly", 5}};
  EXPECT_THAT(std::string(ValidateTrafficRules(rules, {1}).message()),
              HasSubstr("neither a label nor a version"));
  rules.weights = {{"1", 0}};
  EXPECT_THAT(std::string(ValidateTrafficRules(rules, {1}).message()), HasSubstr("must be 1.."));
}

TEST(TrafficRulesTest, RejectsWeightsWhoseSumCouldOverflow) {
  TrafficRules rules;
  rules.weights = {{"1", INT64_MAX}, {"2", INT64_MAX}};
  EXPECT_THAT(std::string(ValidateTrafficRules(rules, {1, 2}).message()),
              HasSubstr("must be 1..1000000"));
  rules.weights = {{"1", kMaxTrafficWeight}, {"2", kMaxTrafficWeight}};
  EXPECT_TRUE(ValidateTrafficRules(rules, {1, 2}).ok());
}

}  // namespace
}  // namespace inferd
