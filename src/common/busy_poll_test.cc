#include "common/busy_poll.h"

#include <chrono>

#include "gtest/gtest.h"

namespace inferd {
namespace {

using std::chrono::steady_clock;

TEST(BusyPollTest, ReturnsTrueAsSoonAsReady) {
  int calls = 0;
  EXPECT_TRUE(BusyPoll(std::chrono::hours(1), [&] { return ++calls == 3; }));
  EXPECT_EQ(calls, 3);
}

TEST(BusyPollTest, GivesUpAfterTheBudget) {
  int calls = 0;
  const auto start = steady_clock::now();
  EXPECT_FALSE(BusyPoll(std::chrono::milliseconds(2), [&] {
    ++calls;
    return false;
  }));
  EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(2));
  EXPECT_GT(calls, 1);
}

TEST(BusyPollTest, ZeroBudgetLooksOnce) {
  int calls = 0;
  EXPECT_FALSE(BusyPoll(steady_clock::duration::zero(), [&] {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(BusyPoll(steady_clock::duration::zero(), [] { return true; }));
}

TEST(PollBudgetTest, StartsAtTheFloorAndStretchesToTheGapsSeen) {
  using std::chrono::microseconds;
  PollBudget budget(microseconds(100), microseconds(1000));
  EXPECT_EQ(budget.budget(), microseconds(100));
  budget.Observe(microseconds(250));  // a client's round trip longer than the floor
  EXPECT_EQ(budget.budget(), microseconds(375));
  budget.Observe(microseconds(20));  // arrivals close together: the floor is enough
  EXPECT_EQ(budget.budget(), microseconds(100));
  budget.Observe(microseconds(900));  // 1.5x would pass the ceiling
  EXPECT_EQ(budget.budget(), microseconds(1000));
  budget.Observe(microseconds(5000));  // no closed loop to catch: back to the floor
  EXPECT_EQ(budget.budget(), microseconds(100));
  budget.Observe(microseconds(400));
  budget.Reset();
  EXPECT_EQ(budget.budget(), microseconds(100));
}

TEST(PollBudgetTest, ZeroFloorNeverPolls) {
  using std::chrono::microseconds;
  PollBudget budget(microseconds(0), microseconds(1000));
  budget.Observe(microseconds(250));
  EXPECT_EQ(budget.budget(), microseconds(0));
}

}  // namespace
}  // namespace inferd
