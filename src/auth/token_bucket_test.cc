#include "auth/token_bucket.h"

#include <chrono>

#include <gtest/gtest.h>

#include "common/fake_time_source.h"

namespace inferd {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, StartsFullAndRefusesPastTheBurst) {
  FakeTimeSource time;
  TokenBucket bucket(/*rate=*/10, /*burst=*/3, time.Now());
  Duration wait{};
  EXPECT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_FALSE(bucket.TryTake(time.Now(), &wait));
  // 10 tokens a second: the next one is 100 ms away.
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(wait), milliseconds(100));
}

TEST(TokenBucketTest, RefillsAtTheRate) {
  FakeTimeSource time;
  TokenBucket bucket(/*rate=*/10, /*burst=*/1, time.Now());
  Duration wait{};
  ASSERT_TRUE(bucket.TryTake(time.Now(), &wait));
  time.Advance(milliseconds(50));
  EXPECT_FALSE(bucket.TryTake(time.Now(), &wait));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(wait), milliseconds(50));
  time.Advance(milliseconds(50));
  EXPECT_TRUE(bucket.TryTake(time.Now(), &wait));
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  FakeTimeSource time;
  TokenBucket bucket(/*rate=*/100, /*burst=*/2, time.Now());
  time.Advance(std::chrono::hours(1));
  Duration wait{};
  EXPECT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_FALSE(bucket.TryTake(time.Now(), &wait));
}

TEST(TokenBucketTest, ASlowRateSaysSecondsToWait) {
  FakeTimeSource time;
  TokenBucket bucket(/*rate=*/0.5, /*burst=*/1, time.Now());
  Duration wait{};
  ASSERT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_FALSE(bucket.TryTake(time.Now(), &wait));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(wait), milliseconds(2000));
}

TEST(TokenBucketTest, AClockThatStepsBackMintsNothing) {
  FakeTimeSource time;
  const TimePoint start = time.Now();
  time.Advance(std::chrono::seconds(10));
  TokenBucket bucket(/*rate=*/1, /*burst=*/1, time.Now());
  Duration wait{};
  ASSERT_TRUE(bucket.TryTake(time.Now(), &wait));
  EXPECT_FALSE(bucket.TryTake(start, &wait));
}

}  // namespace
}  // namespace inferd
