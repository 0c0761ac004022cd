#include "core/repository/resource_tracker.h"

#include <chrono>
#include <string>
#include <vector>

#include "core/memory/memory_budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A ready, idle version of `bytes` on the cpu, last used `t` seconds after the epoch.
VersionFootprint Ready(const std::string& name, uint64_t bytes, int t, std::string sha = "") {
  VersionFootprint v;
  v.key = {name, 1};
  v.device = "cpu";
  v.ready = true;
  v.memory_bytes = bytes;
  v.sha256 = std::move(sha);
  v.last_used = TimePoint() + std::chrono::seconds(t);
  return v;
}

TEST(ResourceTrackerTest, ExplicitBudgetsWinAndOtherDevicesGetTheDefault) {
  const ResourceTracker tracker({{"cpu", 1000}});
  EXPECT_EQ(tracker.BudgetBytes("cpu"), 1000u);
  EXPECT_EQ(tracker.BudgetBytes("cuda:0"), DefaultBudgetBytes("cuda:0"));
}

TEST(ResourceTrackerTest, CountsReadyMemoryOncePerDigestAndEveryReservation) {
  std::vector<VersionFootprint> versions = {Ready("a", 100, 1, "same"), Ready("b", 100, 2, "same"),
                                            Ready("c", 50, 3)};
  VersionFootprint loading;
  loading.key = {"d", 1};
  loading.device = "cpu";
  loading.memory_bytes = 70;  // the last load's size: not counted while not ready
  loading.reserved_bytes = 30;
  versions.push_back(loading);
  VersionFootprint elsewhere = Ready("e", 1000, 4);
  elsewhere.device = "cuda:0";
  versions.push_back(elsewhere);
  EXPECT_EQ(ResourceTracker::UsedBytes("cpu", versions), 100u + 50u + 30u);
  EXPECT_EQ(ResourceTracker::UsedBytes("cuda:0", versions), 1000u);
}

TEST(ResourceTrackerTest, EvictsTheLeastRecentlyUsedIdleVersionsUntilTheLoadFits) {
  const ResourceTracker tracker({{"cpu", 300}});
  const std::vector<VersionFootprint> versions = {Ready("a", 100, 3), Ready("b", 100, 1),
                                                  Ready("c", 100, 2)};
  EXPECT_THAT(tracker.ChooseEvictions("cpu", 0, {"d", 1}, versions).value(), IsEmpty());
  EXPECT_THAT(tracker.ChooseEvictions("cpu", 150, {"d", 1}, versions).value(),
              ElementsAre(VersionKey{"b", 1}, VersionKey{"c", 1}));
}

TEST(ResourceTrackerTest, NeverEvictsTheLoadingModelsOwnVersions) {
  const ResourceTracker tracker({{"cpu", 200}});
  std::vector<VersionFootprint> versions = {Ready("m", 100, 1), Ready("other", 100, 2)};
  EXPECT_THAT(tracker.ChooseEvictions("cpu", 100, {"m", 2}, versions).value(),
              ElementsAre(VersionKey{"other", 1}));
}

TEST(ResourceTrackerTest, EvictingOneHolderOfSharedWeightsFreesNothing) {
  const ResourceTracker tracker({{"cpu", 200}});
  const std::vector<VersionFootprint> versions = {Ready("a", 100, 1, "same"),
                                                  Ready("b", 100, 2, "same"), Ready("c", 100, 3)};
  // a and b hold one copy (100 B), c another: evicting a frees nothing, so c goes too.
  EXPECT_THAT(tracker.ChooseEvictions("cpu", 100, {"d", 1}, versions).value(),
              ElementsAre(VersionKey{"a", 1}, VersionKey{"b", 1}, VersionKey{"c", 1}));
}

TEST(ResourceTrackerTest, NeverEvictsAVersionThatHoldsNoMemory) {
  const ResourceTracker tracker({{"cpu", 100}});
  // A pipeline holds no weights (its step models do): evicting it frees nothing.
  const std::vector<VersionFootprint> versions = {Ready("pipeline", 0, 1), Ready("model", 100, 2)};
  EXPECT_THAT(tracker.ChooseEvictions("cpu", 100, {"d", 1}, versions).value(),
              ElementsAre(VersionKey{"model", 1}));
}

TEST(ResourceTrackerTest, PinnedAndBusyVersionsBlockTheLoadWithTheReason) {
  const ResourceTracker tracker({{"cpu", 250}});
  std::vector<VersionFootprint> versions = {Ready("pinned", 100, 1), Ready("busy", 100, 2)};
  versions[0].pinned = true;
  versions[1].busy = true;
  const absl::StatusOr<std::vector<VersionKey>> victims =
      tracker.ChooseEvictions("cpu", 100, {"late", 1}, versions);
  EXPECT_EQ(victims.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(victims.status().message());
  EXPECT_THAT(message, HasSubstr("late:1 cannot be loaded within the cpu memory budget"));
  EXPECT_THAT(message, HasSubstr("pinned models hold 100 B"));
  EXPECT_THAT(message, HasSubstr("models with requests in flight hold 100 B"));
}

TEST(ResourceTrackerTest, ALoadLargerThanTheWholeBudgetFails) {
  const ResourceTracker tracker({{"cpu", 500}});
  const absl::StatusOr<std::vector<VersionKey>> victims =
      tracker.ChooseEvictions("cpu", 1000, {"huge", 1}, {});
  EXPECT_EQ(victims.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(victims.status().message()), HasSubstr("more than the whole budget"));
}

}  // namespace
}  // namespace inferd
