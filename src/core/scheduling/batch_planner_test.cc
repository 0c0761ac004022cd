#include "core/scheduling/batch_planner.h"

#include <chrono>
#include <memory>
#include <optional>
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

BatchPolicy Dynamic(int64_t max_rows, Duration delay, std::vector<int> preferred = {}) {
  BatchPolicy policy;
  policy.dynamic = true;
  policy.max_rows = max_rows;
  policy.max_queue_delay = delay;
  policy.preferred_batch_sizes = std::move(preferred);
  return policy;
}

// A queue the tests fill with requests of one FP32 input shaped [rows, columns].
class BatchPlannerTest : public ::testing::Test {
 protected:
  void Add(int64_t rows, TimePoint enqueued, int priority = 1, int64_t columns = 2) {
    PendingRequest pending;
    pending.request = std::make_unique<InferRequest>();
    pending.request->inputs.push_back(
        {"x", Tensor::Allocate(DataType::kFp32, {rows, columns}).value()});
    pending.rows = rows;
    pending.priority = priority;
    pending.enqueued = enqueued;
    queue_.Push(std::move(pending));
  }

  RequestQueue queue_{/*priority_levels=*/2, /*max_size=*/0};
};

TEST_F(BatchPlannerTest, EmptyQueuePlansNothing) {
  const BatchPlan plan = PlanBatch(queue_, Dynamic(4, milliseconds(10)), kT0);
  EXPECT_THAT(plan.positions, IsEmpty());
  EXPECT_EQ(plan.decide_again_at, std::nullopt);
}

TEST_F(BatchPlannerTest, FlushesAtOnceWhenFull) {
  for (int i = 0; i < 5; ++i) Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, Dynamic(4, milliseconds(10)), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u), Pair(0u, 2u), Pair(0u, 3u)));
  EXPECT_EQ(plan.decide_again_at, std::nullopt);
}

TEST_F(BatchPlannerTest, WaitsUntilTheOldestRequestReachesMaxQueueDelay) {
  const BatchPolicy policy = Dynamic(8, milliseconds(10));
  Add(1, kT0);
  Add(1, kT0 + milliseconds(7));

  BatchPlan plan = PlanBatch(queue_, policy, kT0 + milliseconds(7));
  EXPECT_THAT(plan.positions, IsEmpty());
  // Measured from the oldest request, not the newest.
  EXPECT_EQ(plan.decide_again_at, kT0 + milliseconds(10));

  plan = PlanBatch(queue_, policy, kT0 + milliseconds(10) - std::chrono::nanoseconds(1));
  EXPECT_THAT(plan.positions, IsEmpty());

  plan = PlanBatch(queue_, policy, kT0 + milliseconds(10));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
  EXPECT_EQ(plan.decide_again_at, std::nullopt);
}

TEST_F(BatchPlannerTest, ZeroDelayRunsWhatIsQueuedAtOnce) {
  Add(1, kT0);
  Add(2, kT0);
  const BatchPlan plan = PlanBatch(queue_, Dynamic(8, Duration::zero()), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST_F(BatchPlannerTest, DispatchesAtOnceAtTheLargestPreferredSize) {
  const BatchPolicy policy = Dynamic(8, milliseconds(10), {2, 4});
  for (int i = 0; i < 5; ++i) Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, policy, kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u), Pair(0u, 2u), Pair(0u, 3u)));
}

TEST_F(BatchPlannerTest, SmallerPreferredSizeWaitsForTheDelay) {
  const BatchPolicy policy = Dynamic(8, milliseconds(10), {2, 4});
  for (int i = 0; i < 3; ++i) Add(1, kT0);

  BatchPlan plan = PlanBatch(queue_, policy, kT0);
  EXPECT_THAT(plan.positions, IsEmpty());
  EXPECT_EQ(plan.decide_again_at, kT0 + milliseconds(10));

  // On expiry: the largest preferred size an exact prefix reaches (2 of the 3 rows).
  plan = PlanBatch(queue_, policy, kT0 + milliseconds(10));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST_F(BatchPlannerTest, OnExpiryWithoutAnExactPreferredPrefixRunsEverything) {
  const BatchPolicy policy = Dynamic(8, milliseconds(10), {2, 4});
  Add(3, kT0);
  Add(2, kT0);
  // Prefixes have 3 and 5 rows: neither is preferred.
  const BatchPlan plan = PlanBatch(queue_, policy, kT0 + milliseconds(10));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST_F(BatchPlannerTest, MultiRowRequestsReachThePreferredSize) {
  const BatchPolicy policy = Dynamic(8, milliseconds(10), {4});
  Add(3, kT0);
  Add(1, kT0);
  Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, policy, kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST_F(BatchPlannerTest, MultiRowRequestCountsItsRows) {
  // 3 + 1 rows fill a batch of 4 at once.
  Add(3, kT0);
  Add(1, kT0);
  Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, Dynamic(4, milliseconds(10)), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST_F(BatchPlannerTest, RequestThatDoesNotFitIsSkippedForALaterSmallerOne) {
  Add(3, kT0);
  Add(2, kT0);  // 3 + 2 > 4: waits for the next batch
  Add(1, kT0);  // fits: 3 + 1 = 4
  const BatchPlan plan = PlanBatch(queue_, Dynamic(4, milliseconds(10)), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 2u)));
}

TEST_F(BatchPlannerTest, ShapeIncompatibleRequestsAreNotMerged) {
  Add(1, kT0, 1, /*columns=*/2);
  Add(1, kT0, 1, /*columns=*/3);
  Add(1, kT0, 1, /*columns=*/2);
  const BatchPlan plan = PlanBatch(queue_, Dynamic(8, milliseconds(10)), kT0 + milliseconds(10));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 2u)));
}

TEST_F(BatchPlannerTest, LaterHighPriorityRequestGoesFirst) {
  BatchPolicy single;  // not dynamic
  Add(1, kT0, /*priority=*/2);
  Add(1, kT0 + milliseconds(1), /*priority=*/1);
  const BatchPlan plan = PlanBatch(queue_, single, kT0 + milliseconds(1));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u)));  // level 0: priority 1
}

TEST_F(BatchPlannerTest, HeadIsTheOldestRequestOfTheHighestLevel) {
  const BatchPolicy policy = Dynamic(8, milliseconds(10));
  Add(1, kT0, /*priority=*/2);
  Add(1, kT0 + milliseconds(5), /*priority=*/1);
  Add(1, kT0 + milliseconds(6), /*priority=*/1);

  // The low-priority request has waited 10 ms, but the delay runs from the head's arrival.
  BatchPlan plan = PlanBatch(queue_, policy, kT0 + milliseconds(10));
  EXPECT_THAT(plan.positions, IsEmpty());
  EXPECT_EQ(plan.decide_again_at, kT0 + milliseconds(15));

  // Then the batch is in service order: both high ones, then the low one.
  plan = PlanBatch(queue_, policy, kT0 + milliseconds(15));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u), Pair(1u, 0u)));
}

TEST_F(BatchPlannerTest, WithoutDynamicBatchingEachRequestRunsAloneAtOnce) {
  BatchPolicy policy;
  policy.dynamic = false;
  policy.max_rows = 8;
  policy.max_queue_delay = milliseconds(10);
  Add(1, kT0);
  Add(1, kT0);
  Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, policy, kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u)));
}

TEST_F(BatchPlannerTest, RequestLargerThanMaxRowsRunsAloneAtOnce) {
  Add(6, kT0);
  Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, Dynamic(4, milliseconds(10)), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u)));
}

TEST_F(BatchPlannerTest, OversizedRequestBehindTheHeadWaitsForItsOwnTurn) {
  const BatchPolicy policy = Dynamic(4, milliseconds(10));
  Add(1, kT0);
  Add(6, kT0);
  Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, policy, kT0 + milliseconds(10));
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 2u)));
}

// Backlog mode: max_rows 2 with preferred size 2 and a long delay; from 4 queued rows on,
// batches of up to 6 rows run at once.
BatchPolicy WithBacklog() {
  BatchPolicy policy = Dynamic(2, milliseconds(50), {2});
  policy.backlog_rows = 4;
  policy.backlog_max_rows = 6;
  return policy;
}

TEST_F(BatchPlannerTest, BelowTheBacklogThresholdTheSloSizeApplies) {
  for (int i = 0; i < 3; ++i) Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, WithBacklog(), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
}

TEST_F(BatchPlannerTest, BacklogRunsUpToTheThroughputBestSizeAtOnce) {
  for (int i = 0; i < 8; ++i) Add(1, kT0);
  const BatchPlan plan = PlanBatch(queue_, WithBacklog(), kT0);
  EXPECT_EQ(plan.positions.size(), 6u);
}

TEST_F(BatchPlannerTest, BacklogDoesNotWaitForTheDelay) {
  Add(3, kT0);
  Add(1, kT0);  // 4 rows queued: the 3-row request cannot join a 2-row batch, but fits in 6
  const BatchPlan plan = PlanBatch(queue_, WithBacklog(), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u), Pair(0u, 1u)));
  EXPECT_EQ(plan.decide_again_at, std::nullopt);
}

TEST_F(BatchPlannerTest, BacklogCountsRowsNotRequests) {
  Add(2, kT0);
  Add(1, kT0);  // 3 rows in 2 requests: below the threshold of 4 rows
  const BatchPlan plan = PlanBatch(queue_, WithBacklog(), kT0);
  EXPECT_THAT(plan.positions, ElementsAre(Pair(0u, 0u)));
}

}  // namespace
}  // namespace inferd
