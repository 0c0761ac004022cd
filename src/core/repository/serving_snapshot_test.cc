#include "core/repository/serving_snapshot.h"

#include <chrono>
#include <memory>
#include <optional>

#include "gtest/gtest.h"

namespace inferd {
namespace {

// A usable model whose READY versions are `versions` (ascending).
ServingModel Model(std::vector<int64_t> versions) {
  ServingModel model;
  model.config_ok = true;
  for (int64_t version : versions) {
    model.ready.push_back({version, {}, std::make_shared<VersionUsage>()});
  }
  return model;
}

int64_t Chosen(const ServingModel& model, std::optional<int64_t> version,
               std::optional<double> u = std::nullopt) {
  const ServingVersion* chosen = ChooseServingVersion(model, version, u);
  return chosen == nullptr ? -1 : chosen->version;
}

TEST(ServingSnapshotTest, ANamedVersionIsServedOnlyWhenReady) {
  const ServingModel model = Model({1, 3});
  EXPECT_EQ(Chosen(model, 1), 1);
  EXPECT_EQ(Chosen(model, 3), 3);
  EXPECT_EQ(Chosen(model, 2), -1) << "not ready: the manager's path answers";
}

TEST(ServingSnapshotTest, WithoutAVersionTheHighestReadyOneServes) {
  EXPECT_EQ(Chosen(Model({1, 2, 5}), std::nullopt), 5);
  EXPECT_EQ(Chosen(Model({}), std::nullopt), -1);
}

TEST(ServingSnapshotTest, AnUnusableConfigIsLeftToTheManager) {
  ServingModel model = Model({1});
  model.config_ok = false;
  EXPECT_EQ(Chosen(model, std::nullopt), -1);
  EXPECT_EQ(Chosen(model, 1), -1);
}

TEST(ServingSnapshotTest, TrafficWeightsPickAReadyVersionElseTheHighest) {
  ServingModel model = Model({1, 2});
  model.traffic.labels = {{"stable", 1}, {"canary", 3}};
  model.traffic.weights = {{"stable", 1}, {"canary", 1}};
  EXPECT_EQ(Chosen(model, std::nullopt, 0.25), 1);
  EXPECT_EQ(Chosen(model, std::nullopt, 0.75), 2) << "canary (3) is not ready";
  EXPECT_EQ(Chosen(model, std::nullopt, std::nullopt), 2) << "metadata ignores the weights";
}

TEST(ServingSnapshotTest, FindsModelsByName) {
  ServingSnapshot snapshot;
  snapshot.models["m"] = Model({1});
  ASSERT_NE(snapshot.Find("m"), nullptr);
  EXPECT_EQ(snapshot.Find("m")->ready.size(), 1u);
  EXPECT_EQ(snapshot.Find("other"), nullptr);
}

TEST(ServingSnapshotTest, UsageCountsRequestsAndNeverMovesBack) {
  VersionUsage usage;
  const TimePoint t = TimePoint() + std::chrono::hours(1);
  EXPECT_EQ(usage.last_used(), TimePoint());
  usage.RecordRequest(t);
  usage.RecordRequest(t - std::chrono::seconds(1));  // read the clock earlier, stored later
  EXPECT_EQ(usage.requests(), 2u);
  EXPECT_EQ(usage.last_used(), t);
  usage.Touch(t + std::chrono::seconds(5));
  EXPECT_EQ(usage.last_used(), t + std::chrono::seconds(5));
}

}  // namespace
}  // namespace inferd
