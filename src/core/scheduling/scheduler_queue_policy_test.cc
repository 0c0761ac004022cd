#include "core/scheduling/scheduler.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "common/fake_time_source.h"
#include "core/scheduling/scheduler_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using std::chrono::milliseconds;
using ::testing::AllOf;
using testing::Completions;
using testing::Dynamic;
using ::testing::ElementsAre;
using testing::Event;
using testing::FakeModel;
using testing::Floats;
using ::testing::HasSubstr;
using testing::kHangTimeout;
using testing::MakeRequest;
using testing::Ns;
using testing::Options;
using testing::SchedulerFixture;
using testing::TestConfig;
using testing::WithPriority;
using testing::WithTimeout;

// --- queue policy ---------------------------------------------------------------------------

using QueuePolicyTest = SchedulerFixture;

TEST_F(QueuePolicyTest, FullQueueRefusesSynchronouslyWithResourceExhausted) {
  model.BlockOn(&gate);
  options = Options("mlp:2");
  options.queue.max_queue_size = 2;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(MakeRequest("q1", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("q2", {2.0f}, completions));
  scheduler.Enqueue(MakeRequest("over", {3.0f}, completions));

  // Refused at once, on this thread, before anything else completed.
  ASSERT_EQ(completions.size(), 1u);
  const Completions::Entry refused = completions.entries()[0];
  EXPECT_EQ(refused.id, "over");
  EXPECT_EQ(refused.thread, std::this_thread::get_id());
  EXPECT_EQ(refused.response.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.response.status.message()),
              AllOf(HasSubstr("'mlp:2'"), HasSubstr("max_queue_size 2")));
  EXPECT_EQ(scheduler.queue_depth(), 2u);

  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(4));
  EXPECT_THAT(completions.ids(), ElementsAre("over", "running", "q1", "q2"));
  EXPECT_EQ(model.calls(), 3);
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.fail.count, 1u);
  EXPECT_EQ(s.success.count, 3u);

  // Room again: accepted.
  scheduler.Enqueue(MakeRequest("later", {4.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(5));
  EXPECT_TRUE(completions.Of("later").status.ok());
}

TEST_F(QueuePolicyTest, ExpiredRequestGetsDeadlineExceededAndNeverRuns) {
  model.BlockOn(&gate);
  options.time = &time;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {1.0f}, completions), milliseconds(1)));
  scheduler.Enqueue(MakeRequest("patient", {2.0f}, completions));
  scheduler.Enqueue(
      WithTimeout(MakeRequest("in-time", {3.0f}, completions), std::chrono::seconds(1)));
  time.Advance(milliseconds(2));  // past late's deadline, while the instance is busy
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(4));

  const InferResponse late = completions.Of("late");
  EXPECT_EQ(late.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(late.status.message()),
              AllOf(HasSubstr("'m:1'"), HasSubstr("past its timeout of 1000 us")));
  EXPECT_TRUE(late.outputs.empty());
  EXPECT_TRUE(completions.Of("patient").status.ok());
  EXPECT_TRUE(completions.Of("in-time").status.ok());
  // The expired request never reached the model.
  std::vector<std::vector<float>> batches = model.batches();
  EXPECT_THAT(batches, ElementsAre(ElementsAre(0.0f), ElementsAre(2.0f), ElementsAre(3.0f)));
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.fail.count, 1u);
  EXPECT_EQ(s.fail.ns, static_cast<uint64_t>(Ns(milliseconds(2))));
  EXPECT_EQ(s.success.count, 3u);
}

// Waits are in the time source's terms: an hour's batch delay ends as soon as the fake time
// passes it (it used to be waited out as an hour of real time).
TEST_F(QueuePolicyTest, BatchDelayEndsWhenTheTimeSourcePassesIt) {
  options.time = &time;
  options.batch_policy = Dynamic(8, std::chrono::hours(1));
  Scheduler& scheduler = Start();

  const TimePoint start = time.Now();
  scheduler.Enqueue(MakeRequest("alone", {1.0f}, completions));
  // Advanced only once the instance waits for the batch delay, so the wait is what ends.
  ASSERT_TRUE(time.AwaitWaiterFor(start + std::chrono::hours(1), kHangTimeout));
  time.Advance(std::chrono::hours(1));
  ASSERT_TRUE(completions.WaitFor(1));
  EXPECT_TRUE(completions.Of("alone").status.ok());
  EXPECT_EQ(model.calls(), 1);
}

// The deadline watcher, too, waits in the time source's terms.
TEST_F(QueuePolicyTest, AnHourLongDeadlinePassesWhenTheTimeSourcePassesIt) {
  model.BlockOn(&gate);
  options.time = &time;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  const TimePoint start = time.Now();
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {1.0f}, completions), std::chrono::hours(1)));
  // Advanced only once the deadline watcher waits for the deadline.
  ASSERT_TRUE(time.AwaitWaiterFor(start + std::chrono::hours(1), kHangTimeout));
  time.Advance(std::chrono::hours(1));
  ASSERT_TRUE(completions.WaitFor(1));
  EXPECT_EQ(completions.Of("late").status.code(), absl::StatusCode::kDeadlineExceeded);
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(2));
}

TEST_F(QueuePolicyTest, ExpiredRequestIsAnsweredWhileEveryInstanceIsBusy) {
  model.BlockOn(&gate);
  options.time = &time;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {1.0f}, completions), milliseconds(1)));
  time.Advance(milliseconds(1));

  // The only instance is still inside the model: the deadline watcher answers.
  ASSERT_TRUE(completions.WaitFor(1));
  EXPECT_EQ(completions.Of("late").status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(model.calls(), 1);
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(2));
  EXPECT_TRUE(completions.Of("running").status.ok());
  EXPECT_EQ(model.calls(), 1);
}

TEST_F(QueuePolicyTest, ExpiredRequestGetsResourceExhaustedWhenTimeoutStatusIs429) {
  model.BlockOn(&gate);
  options.time = &time;
  options.queue.timeout_code = absl::StatusCode::kResourceExhausted;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {1.0f}, completions), milliseconds(1)));
  time.Advance(milliseconds(1));  // a deadline at exactly now has passed
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(2));

  const InferResponse late = completions.Of("late");
  EXPECT_EQ(late.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(late.status.message()),
              AllOf(HasSubstr("past its timeout of 1000 us"), HasSubstr("retry later")));
  EXPECT_EQ(model.calls(), 1);
}

TEST_F(QueuePolicyTest, QueueDefaultTimeoutAppliesToRequestsWithoutTheirOwn) {
  model.BlockOn(&gate);
  options.time = &time;
  options.queue.default_timeout_us = 5000;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(MakeRequest("default", {1.0f}, completions));
  scheduler.Enqueue(WithTimeout(MakeRequest("own", {2.0f}, completions), milliseconds(20)));
  time.Advance(milliseconds(10));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(3));

  EXPECT_EQ(completions.Of("default").status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(completions.Of("default").status.message()),
              HasSubstr("past its timeout of 5000 us"));
  EXPECT_TRUE(completions.Of("own").status.ok());
}

TEST_F(QueuePolicyTest, RequestExpiresWhileWaitingForABatchToFill) {
  options.time = &time;
  options.batch_policy = Dynamic(8, std::chrono::hours(1));
  Scheduler& scheduler = Start();

  // The idle instance waits for the earlier of the batch delay and the deadline.
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {1.0f}, completions), milliseconds(1)));
  time.Advance(milliseconds(1));
  ASSERT_TRUE(completions.WaitFor(1));

  EXPECT_EQ(completions.Of("late").status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(model.calls(), 0);
}

// --- priorities and ordering ----------------------------------------------------------------

TEST_F(QueuePolicyTest, HigherPriorityRequestQueuedLaterRunsFirst) {
  model.BlockOn(&gate);
  options.queue.priority_levels = 2;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(WithPriority(MakeRequest("low", {1.0f}, completions), 2));
  scheduler.Enqueue(MakeRequest("default", {2.0f}, completions));  // 0: the lowest level
  scheduler.Enqueue(WithPriority(MakeRequest("high", {3.0f}, completions), 1));
  scheduler.Enqueue(WithPriority(MakeRequest("high-b", {4.0f}, completions), 1));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(5));

  EXPECT_THAT(completions.ids(), ElementsAre("running", "high", "high-b", "low", "default"));
  for (const Completions::Entry& entry : completions.entries()) {
    EXPECT_TRUE(entry.response.status.ok()) << entry.id << ": " << entry.response.status;
  }
}

TEST_F(QueuePolicyTest, DefaultPriorityLevelFromTheQueueConfig) {
  model.BlockOn(&gate);
  options.queue.priority_levels = 3;
  options.queue.default_priority_level = 2;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(WithPriority(MakeRequest("lowest", {1.0f}, completions), 3));
  scheduler.Enqueue(MakeRequest("default", {2.0f}, completions));  // level 2
  scheduler.Enqueue(WithPriority(MakeRequest("high", {3.0f}, completions), 1));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(4));

  EXPECT_THAT(completions.ids(), ElementsAre("running", "high", "default", "lowest"));
}

// A tenant's default priority (InferRequest::fallback_priority, auth/tenant.h) applies to
// requests that set none, is clamped to the model's levels, and never beats an explicit one.
TEST_F(QueuePolicyTest, FallbackPriorityAppliesOnlyWithoutAnExplicitPriority) {
  model.BlockOn(&gate);
  options.queue.priority_levels = 2;
  Scheduler& scheduler = Start();

  auto with_fallback = [](std::unique_ptr<InferRequest> request, int fallback) {
    request->fallback_priority = fallback;
    return request;
  };
  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(MakeRequest("default", {1.0f}, completions));  // level 2
  // Fallback 9 on a two-level model: clamped to 2, after "default" (same level, later).
  scheduler.Enqueue(with_fallback(MakeRequest("tenant-low", {2.0f}, completions), 9));
  scheduler.Enqueue(with_fallback(MakeRequest("tenant-high", {3.0f}, completions), 1));
  // An explicit priority wins over the fallback.
  scheduler.Enqueue(
      with_fallback(WithPriority(MakeRequest("explicit", {4.0f}, completions), 2), 1));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(5));

  EXPECT_THAT(completions.ids(),
              ElementsAre("running", "tenant-high", "default", "tenant-low", "explicit"));
}

// Two instances: "a" runs on one, "b" on the other; b finishes first.
class TwoInstanceOrderTest : public ::testing::TestWithParam<bool> {};

TEST_P(TwoInstanceOrderTest, DeliversInArrivalOrderOnlyWithPreserveOrdering) {
  const bool preserve_ordering = GetParam();
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  Event gate_a, gate_b, gate_c;
  model.BlockValueOn(1.0f, &gate_a);
  model.BlockValueOn(2.0f, &gate_b);
  model.BlockValueOn(3.0f, &gate_c);
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options("m:1", 2);
  options.preserve_ordering = preserve_ordering;
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f}, completions));
  ASSERT_TRUE(model.WaitForCalls(2));  // one instance blocked on each
  gate_b.Notify();
  // When c enters the model, the instance that ran b has finished answering it (or holding
  // its answer back): the same thread does one then the other.
  scheduler.Enqueue(MakeRequest("c", {3.0f}, completions));
  ASSERT_TRUE(model.WaitForCalls(3));
  if (preserve_ordering) {
    EXPECT_EQ(completions.size(), 0u) << "b was answered before a";
  } else {
    EXPECT_THAT(completions.ids(), ElementsAre("b"));
  }

  gate_a.Notify();
  ASSERT_TRUE(completions.WaitFor(2));
  EXPECT_THAT(completions.ids(), preserve_ordering ? ElementsAre("a", "b") : ElementsAre("b", "a"));
  gate_c.Notify();
  ASSERT_TRUE(completions.WaitFor(3));
  EXPECT_THAT(completions.ids(),
              preserve_ordering ? ElementsAre("a", "b", "c") : ElementsAre("b", "a", "c"));
  for (const Completions::Entry& entry : completions.entries()) {
    ASSERT_TRUE(entry.response.status.ok()) << entry.id << ": " << entry.response.status;
  }
  EXPECT_THAT(Floats(completions.Of("b").outputs[0].tensor), ElementsAre(4.0f));
}

INSTANTIATE_TEST_SUITE_P(SchedulerTest, TwoInstanceOrderTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "PreserveOrdering" : "AsSoonAsDone";
                         });

TEST(SchedulerTest, PreserveOrderingKeepsExpiredAnswersInArrivalOrder) {
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  Event gate_a, gate_b, gate_c;
  model.BlockValueOn(1.0f, &gate_a);
  model.BlockValueOn(2.0f, &gate_b);
  model.BlockValueOn(3.0f, &gate_c);
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options("m:1", 2);
  options.preserve_ordering = true;
  options.time = &time;
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f}, completions));
  ASSERT_TRUE(model.WaitForCalls(2));
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {9.0f}, completions), milliseconds(1)));
  time.Advance(milliseconds(2));
  gate_b.Notify();
  // b's instance answers b, expires "late" and then takes c: both answers are held for a.
  scheduler.Enqueue(MakeRequest("c", {3.0f}, completions));
  ASSERT_TRUE(model.WaitForCalls(3));
  EXPECT_EQ(completions.size(), 0u);

  gate_a.Notify();
  ASSERT_TRUE(completions.WaitFor(3));
  EXPECT_THAT(completions.ids(), ElementsAre("a", "b", "late"));
  gate_c.Notify();
  ASSERT_TRUE(completions.WaitFor(4));
  EXPECT_THAT(completions.ids(), ElementsAre("a", "b", "late", "c"));
  EXPECT_EQ(completions.Of("late").status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(model.batch_rows(), ElementsAre(1u, 1u, 1u));
}

}  // namespace
}  // namespace inferd
