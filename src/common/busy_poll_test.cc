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

}  // namespace
}  // namespace inferd
