#include "core/config/version_policy.h"

#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

VersionPolicy Policy(VersionPolicy::Kind kind, int64_t latest = 1,
                     std::vector<int64_t> specific = {}) {
  VersionPolicy policy;
  policy.kind = kind;
  policy.latest = latest;
  policy.specific = std::move(specific);
  return policy;
}

TEST(VersionPolicyTest, DefaultServesOnlyTheHighestVersion) {
  EXPECT_THAT(SelectVersions(VersionPolicy{}, {1, 2, 7}), ElementsAre(7));
}

TEST(VersionPolicyTest, LatestNKeepsTheNHighest) {
  const VersionPolicy policy = Policy(VersionPolicy::Kind::kLatest, 2);
  EXPECT_THAT(SelectVersions(policy, {1, 2, 7}), ElementsAre(2, 7));
  EXPECT_THAT(SelectVersions(policy, {3}), ElementsAre(3));
  EXPECT_THAT(SelectVersions(policy, {}), IsEmpty());
}

TEST(VersionPolicyTest, AllServesEveryVersion) {
  const VersionPolicy policy = Policy(VersionPolicy::Kind::kAll);
  EXPECT_THAT(SelectVersions(policy, {1, 2, 7}), ElementsAre(1, 2, 7));
}

TEST(VersionPolicyTest, SpecificServesOnlyListedVersionsThatExist) {
  const VersionPolicy policy = Policy(VersionPolicy::Kind::kSpecific, 1, {1, 3, 7});
  EXPECT_THAT(SelectVersions(policy, {1, 2, 7}), ElementsAre(1, 7));
  EXPECT_THAT(SelectVersions(policy, {2}), IsEmpty());
}

TEST(VersionPolicyTest, DescribesItself) {
  EXPECT_EQ(DescribeVersionPolicy(VersionPolicy{}), "latest 1");
  EXPECT_EQ(DescribeVersionPolicy(Policy(VersionPolicy::Kind::kSpecific, 1, {1, 3})),
            "specific [1, 3]");
}

}  // namespace
}  // namespace inferd
