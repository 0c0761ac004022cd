#include "common/adaptive_threads.h"

#include <functional>
#include <map>

#include "gtest/gtest.h"

namespace inferd {
namespace {

// Runs `steps` decode steps of `tokens` tokens, each timed by `seconds_per_token(threads)`;
// returns how many steps used each count.
std::map<int, int> RunSteps(AdaptiveThreads& chooser, int steps,
                            const std::function<double(int)>& seconds_per_token, int tokens = 1) {
  std::map<int, int> used;
  for (int i = 0; i < steps; ++i) {
    const int threads = chooser.Next();
    ++used[threads];
    chooser.Record(threads, seconds_per_token(threads) * tokens, tokens);
  }
  return used;
}

double Alone(int threads) { return threads == 2 ? 0.014 : 0.024; }   // 2 cores free
double Shared(int threads) { return threads == 2 ? 0.045 : 0.027; }  // a busy neighbour

TEST(AdaptiveThreadsTest, AFixedCountIsAlwaysUsed) {
  AdaptiveThreads chooser(4, /*adaptive=*/false);
  const std::map<int, int> used = RunSteps(chooser, 100, Alone);
  EXPECT_EQ(used, (std::map<int, int>{{4, 100}}));
}

TEST(AdaptiveThreadsTest, OneCoreHasNothingToChoose) {
  AdaptiveThreads chooser(1, /*adaptive=*/true);
  EXPECT_EQ(RunSteps(chooser, 50, Alone), (std::map<int, int>{{1, 50}}));
}

TEST(AdaptiveThreadsTest, CandidatesHalveDownToOne) {
  AdaptiveThreads chooser(6, /*adaptive=*/true, 1000);
  // The first steps try each candidate once: 6, 3, 1 (6 / 2 / 2 = 1).
  std::vector<int> first;
  for (int i = 0; i < 3; ++i) {
    first.push_back(chooser.Next());
    chooser.Record(first.back(), 0.01 * first.back(), 1);  // fewer threads, faster
  }
  EXPECT_EQ(first, (std::vector<int>{6, 3, 1}));
  EXPECT_EQ(chooser.Next(), 1);
}

TEST(AdaptiveThreadsTest, AloneEveryCoreWinsAndTheOtherCountIsOnlyProbed) {
  AdaptiveThreads chooser(2, /*adaptive=*/true, 64);
  const std::map<int, int> used = RunSteps(chooser, 1024, Alone);
  // The first try, then probes 64, 128, 256, 512 and 512 steps apart: five in 1024 steps.
  EXPECT_LE(used.at(1), 6);
  EXPECT_GE(used.at(2), 1024 - 6);
}

TEST(AdaptiveThreadsTest, ABusyNeighbourMovesItToFewerThreadsAtOnce) {
  AdaptiveThreads chooser(2, /*adaptive=*/true, 64);
  RunSteps(chooser, 300, Alone);
  ASSERT_EQ(chooser.Best(), 2);
  // The neighbour arrives: the best count's own samples show it within a window.
  const std::map<int, int> used = RunSteps(chooser, 100, Shared);
  EXPECT_EQ(chooser.Best(), 1);
  // Two steps show the slowdown (the median of three times); then at most a probe or two.
  EXPECT_LE(used.count(2) ? used.at(2) : 0, 4);
}

TEST(AdaptiveThreadsTest, WhenTheNeighbourLeavesAProbeFindsEveryCoreFasterAgain) {
  AdaptiveThreads chooser(2, /*adaptive=*/true, 64);
  RunSteps(chooser, 100, Shared);
  ASSERT_EQ(chooser.Best(), 1);
  RunSteps(chooser, 200, Alone);
  EXPECT_EQ(chooser.Best(), 2);
}

TEST(AdaptiveThreadsTest, ProbesThatLoseComeLessOftenDownToOneIn512Steps) {
  AdaptiveThreads chooser(2, /*adaptive=*/true, 64);
  RunSteps(chooser, 2048, Shared);
  const std::map<int, int> used = RunSteps(chooser, 4096, Shared);
  EXPECT_GE(used.at(2), 4096 / 512 - 1);
  EXPECT_LE(used.at(2), 4096 / 512 + 1);
}

TEST(AdaptiveThreadsTest, ComparesTimePerTokenNotPerStep) {
  AdaptiveThreads chooser(2, /*adaptive=*/true, 64);
  // Two threads: 16-token steps of 0.16 s (0.010 s a token); one thread: 1-token steps of
  // 0.015 s. Per step one thread looks faster; per token two are.
  for (int i = 0; i < 2; ++i) {
    const int threads = chooser.Next();
    if (threads == 2) chooser.Record(2, 0.16, 16);
    if (threads == 1) chooser.Record(1, 0.015, 1);
  }
  EXPECT_EQ(chooser.Best(), 2);
}

TEST(AdaptiveThreadsTest, IgnoresRecordsItCannotUse) {
  AdaptiveThreads chooser(2, /*adaptive=*/true, 64);
  chooser.Record(7, 0.01, 1);    // not a candidate
  chooser.Record(2, 0.01, 0);    // no tokens
  chooser.Record(2, -1.0, 1);    // a clock that went backwards
  EXPECT_EQ(chooser.Next(), 2);  // still in the first window: nothing was recorded
  EXPECT_EQ(chooser.Best(), 2);
}

}  // namespace
}  // namespace inferd
