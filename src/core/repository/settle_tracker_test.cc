#include "core/repository/settle_tracker.h"

#include <chrono>

#include "common/fake_time_source.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using std::chrono::milliseconds;

TEST(SettleTrackerTest, CopiedFolderIsStableOnlyAfterItStopsChangingForTheInterval) {
  FakeTimeSource time;
  SettleTracker tracker(milliseconds(500));
  EXPECT_FALSE(tracker.Observe("m/2", "model.pt:100", time.Now()));
  time.Advance(milliseconds(400));
  EXPECT_FALSE(tracker.Observe("m/2", "model.pt:200", time.Now()));  // still growing
  time.Advance(milliseconds(400));
  EXPECT_FALSE(tracker.Observe("m/2", "model.pt:200", time.Now()));  // unchanged 400 ms
  time.Advance(milliseconds(100));
  EXPECT_TRUE(tracker.Observe("m/2", "model.pt:200", time.Now()));  // unchanged 500 ms
}

TEST(SettleTrackerTest, AChangeRestartsTheInterval) {
  FakeTimeSource time;
  SettleTracker tracker(milliseconds(500));
  tracker.Observe("m/2", "a", time.Now());
  time.Advance(milliseconds(600));
  EXPECT_TRUE(tracker.Observe("m/2", "a", time.Now()));
  EXPECT_FALSE(tracker.Observe("m/2", "b", time.Now()));
  time.Advance(milliseconds(500));
  EXPECT_TRUE(tracker.Observe("m/2", "b", time.Now()));
}

TEST(SettleTrackerTest, RenamedInFolderIsTakenAtOnce) {
  FakeTimeSource time;
  SettleTracker tracker(milliseconds(500));
  tracker.MarkRenamedIn("m/3");
  EXPECT_TRUE(tracker.Observe("m/3", "model.pt:100", time.Now()));
}

TEST(SettleTrackerTest, EmptyFolderIsNeverStable) {
  FakeTimeSource time;
  SettleTracker tracker(milliseconds(500));
  tracker.MarkRenamedIn("m/4");
  EXPECT_FALSE(tracker.Observe("m/4", "", time.Now()));
  time.Advance(std::chrono::seconds(10));
  EXPECT_FALSE(tracker.Observe("m/4", "", time.Now()));
}

TEST(SettleTrackerTest, ForgetStartsOver) {
  FakeTimeSource time;
  SettleTracker tracker(milliseconds(500));
  tracker.MarkRenamedIn("m/5");
  tracker.Forget("m/5");
  EXPECT_FALSE(tracker.Observe("m/5", "x", time.Now()));
}

}  // namespace
}  // namespace inferd
