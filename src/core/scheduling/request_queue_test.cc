#include "core/scheduling/request_queue.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

const TimePoint kT0 = TimePoint() + std::chrono::hours(1);

PendingRequest Pending(std::string id, int priority = 1,
                       std::optional<TimePoint> deadline = std::nullopt) {
  PendingRequest pending;
  pending.request = std::make_unique<InferRequest>();
  pending.request->id = std::move(id);
  pending.priority = priority;
  pending.enqueued = kT0;
  pending.deadline = deadline;
  return pending;
}

std::vector<std::string> Ids(const std::vector<PendingRequest>& requests) {
  std::vector<std::string> ids;
  for (const PendingRequest& pending : requests) ids.push_back(pending.request->id);
  return ids;
}

// Ids in service order, as ForEachInOrder visits them.
std::vector<std::string> ServiceOrder(const RequestQueue& queue) {
  std::vector<std::string> ids;
  queue.ForEachInOrder([&](size_t, size_t, const PendingRequest& pending) {
    ids.push_back(pending.request->id);
    return true;
  });
  return ids;
}

TEST(RequestQueueTest, ServesHigherPriorityFirstAndFifoWithinALevel) {
  RequestQueue queue(/*priority_levels=*/3, /*max_size=*/0);
  queue.Push(Pending("low", 3));
  queue.Push(Pending("high-a", 1));
  queue.Push(Pending("mid", 2));
  queue.Push(Pending("high-b", 1));
  queue.Push(Pending("low-b", 3));

  EXPECT_EQ(queue.size(), 5u);
  EXPECT_THAT(ServiceOrder(queue), ElementsAre("high-a", "high-b", "mid", "low", "low-b"));
}

TEST(RequestQueueTest, ForEachInOrderReportsPositionsAndStopsWhenAsked) {
  RequestQueue queue(2, 0);
  queue.Push(Pending("low", 2));
  queue.Push(Pending("high-a", 1));
  queue.Push(Pending("high-b", 1));

  std::vector<std::pair<size_t, size_t>> positions;
  queue.ForEachInOrder([&](size_t level, size_t index, const PendingRequest&) {
    positions.push_back({level, index});
    return positions.size() < 2;
  });
  EXPECT_THAT(positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST(RequestQueueTest, ClampsPrioritiesOutsideTheLevels) {
  RequestQueue queue(2, 0);
  queue.Push(Pending("too-low", 7));
  queue.Push(Pending("normal-low", 2));
  queue.Push(Pending("zero", 0));

  EXPECT_THAT(ServiceOrder(queue), ElementsAre("zero", "too-low", "normal-low"));
}

TEST(RequestQueueTest, SingleLevelIsPlainFifo) {
  RequestQueue queue(1, 0);
  queue.Push(Pending("a", 1));
  queue.Push(Pending("b", 5));
  queue.Push(Pending("c", 1));
  EXPECT_THAT(ServiceOrder(queue), ElementsAre("a", "b", "c"));
}

TEST(RequestQueueTest, FullAtMaxSizeAcrossLevels) {
  RequestQueue queue(2, /*max_size=*/2);
  EXPECT_TRUE(queue.empty());
  EXPECT_FALSE(queue.full());
  queue.Push(Pending("a", 1));
  EXPECT_FALSE(queue.full());
  queue.Push(Pending("b", 2));
  EXPECT_TRUE(queue.full());

  queue.Take({{0, 0}});
  EXPECT_FALSE(queue.full());
  EXPECT_EQ(queue.size(), 1u);
}

TEST(RequestQueueTest, UnboundedQueueIsNeverFull) {
  RequestQueue queue(1, /*max_size=*/0);
  for (int i = 0; i < 1000; ++i) queue.Push(Pending(std::to_string(i)));
  EXPECT_FALSE(queue.full());
  EXPECT_EQ(queue.size(), 1000u);
}

TEST(RequestQueueTest, TakeExpiredTakesDeadlinesAtOrBeforeNow) {
  RequestQueue queue(2, 0);
  queue.Push(Pending("no-deadline", 1));
  queue.Push(Pending("at-now", 1, kT0 + milliseconds(5)));
  queue.Push(Pending("later", 1, kT0 + milliseconds(6)));
  queue.Push(Pending("earlier-low", 2, kT0 + milliseconds(1)));

  std::vector<PendingRequest> expired;
  queue.TakeExpired(kT0 + milliseconds(5), &expired);

  EXPECT_THAT(Ids(expired), ElementsAre("at-now", "earlier-low"));
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_THAT(ServiceOrder(queue), ElementsAre("no-deadline", "later"));

  // Appends; takes nothing before its time.
  queue.TakeExpired(kT0 + milliseconds(5), &expired);
  EXPECT_EQ(expired.size(), 2u);
  queue.TakeExpired(kT0 + milliseconds(6), &expired);
  EXPECT_THAT(Ids(expired), ElementsAre("at-now", "earlier-low", "later"));
  EXPECT_THAT(ServiceOrder(queue), ElementsAre("no-deadline"));
}

TEST(RequestQueueTest, EarliestDeadlineAcrossLevels) {
  RequestQueue queue(2, 0);
  EXPECT_EQ(queue.EarliestDeadline(), std::nullopt);
  queue.Push(Pending("none", 1));
  EXPECT_EQ(queue.EarliestDeadline(), std::nullopt);
  queue.Push(Pending("high", 1, kT0 + milliseconds(9)));
  queue.Push(Pending("low", 2, kT0 + milliseconds(3)));
  queue.Push(Pending("high-later", 1, kT0 + milliseconds(4)));

  EXPECT_EQ(queue.EarliestDeadline(), kT0 + milliseconds(3));
  std::vector<PendingRequest> expired;
  queue.TakeExpired(kT0 + milliseconds(3), &expired);
  EXPECT_EQ(queue.EarliestDeadline(), kT0 + milliseconds(4));
}

TEST(RequestQueueTest, TakeRemovesPositionsAndKeepsTheRestInOrder) {
  RequestQueue queue(2, 0);
  for (std::string id : {"h0", "h1", "h2", "h3"}) queue.Push(Pending(id, 1));
  for (std::string id : {"l0", "l1"}) queue.Push(Pending(id, 2));

  const std::vector<PendingRequest> taken = queue.Take({{0, 1}, {0, 3}, {1, 0}});

  EXPECT_THAT(Ids(taken), ElementsAre("h1", "h3", "l0"));
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_THAT(ServiceOrder(queue), ElementsAre("h0", "h2", "l1"));
}

TEST(RequestQueueTest, TakeAllEmptiesInServiceOrder) {
  RequestQueue queue(2, 3);
  queue.Push(Pending("low", 2));
  queue.Push(Pending("high", 1));
  queue.Push(Pending("low-b", 2));

  EXPECT_THAT(Ids(queue.TakeAll()), ElementsAre("high", "low", "low-b"));
  EXPECT_TRUE(queue.empty());
  EXPECT_FALSE(queue.full());
  EXPECT_THAT(ServiceOrder(queue), IsEmpty());
}

}  // namespace
}  // namespace inferd
