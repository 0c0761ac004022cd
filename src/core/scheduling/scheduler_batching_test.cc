#include "core/scheduling/scheduler.h"

#include <chrono>
#include <cstdint>
#include <map>
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
using testing::Completions;
using testing::Doubled;
using testing::Dynamic;
using ::testing::ElementsAre;
using testing::Event;
using testing::FakeModel;
using testing::Floats;
using testing::kHangTimeout;
using testing::MakeRequest;
using testing::Ns;
using testing::Options;
using testing::SchedulerFixture;
using testing::TestConfig;

// --- dynamic batching -----------------------------------------------------------------------

using BatchingTest = SchedulerFixture;

TEST_F(BatchingTest, BatchesRequestsQueuedWhileTheInstanceIsBusy) {
  model.BlockOn(&gate);
  options.batch_policy = Dynamic(8, Duration::zero());
  options.time = &time;
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("first", {100.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  time.Advance(milliseconds(5));
  // 1 + 2 + 1 + 3 = 7 rows, queued behind the blocked instance.
  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f, 3.0f}, completions));
  scheduler.Enqueue(MakeRequest("c", {4.0f}, completions));
  scheduler.Enqueue(MakeRequest("d", {5.0f, 6.0f, 7.0f}, completions));
  EXPECT_EQ(scheduler.queue_depth(), 4u);
  time.Advance(milliseconds(3));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(5));

  // One engine call for the four: their rows in arrival order.
  ASSERT_EQ(model.calls(), 2);
  EXPECT_THAT(model.batches()[1], ElementsAre(1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(completions.ids(), ElementsAre("first", "a", "b", "c", "d"));
  // Each request gets exactly its own rows back, of every output.
  const std::map<std::string, std::vector<float>> sent = {
      {"first", {100}}, {"a", {1}}, {"b", {2, 3}}, {"c", {4}}, {"d", {5, 6, 7}}};
  for (const auto& [id, values] : sent) {
    const InferResponse response = completions.Of(id);
    ASSERT_TRUE(response.status.ok()) << id << ": " << response.status;
    ASSERT_EQ(response.outputs.size(), 2u) << id;
    EXPECT_THAT(response.outputs[0].tensor.shape(),
                ElementsAre(static_cast<int64_t>(values.size())))
        << id;
    EXPECT_EQ(Floats(response.outputs[0].tensor), Doubled(values)) << id;
    std::vector<float> negated = values;
    for (float& v : negated) v = -v;
    EXPECT_EQ(Floats(response.outputs[1].tensor), negated) << id;
  }

  // Statistics: rows and engine calls, per batch size; the fake clock makes times exact.
  // "first" ran from t0 to t0+8ms (the clock moved while it was blocked); the batch of four
  // had waited 3 ms when it started, and took no time.
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.inference_count, 8u);
  EXPECT_EQ(s.execution_count, 2u);
  ASSERT_EQ(s.batch_stats.size(), 2u);
  EXPECT_EQ(s.batch_stats.at(1).compute_infer.count, 1u);
  EXPECT_EQ(s.batch_stats.at(1).compute_infer.ns, static_cast<uint64_t>(Ns(milliseconds(8))));
  EXPECT_EQ(s.batch_stats.at(7).compute_infer.count, 1u);
  EXPECT_EQ(s.batch_stats.at(7).compute_infer.ns, 0u);
  EXPECT_EQ(s.success.count, 5u);
  EXPECT_EQ(s.success.ns, static_cast<uint64_t>(Ns(milliseconds(8 + 4 * 3))));
  EXPECT_EQ(s.queue.count, 5u);
  EXPECT_EQ(s.queue.ns, static_cast<uint64_t>(Ns(milliseconds(4 * 3))));
  EXPECT_EQ(s.compute_infer.count, 5u);
  EXPECT_EQ(s.compute_infer.ns, static_cast<uint64_t>(Ns(milliseconds(8))));
  EXPECT_EQ(s.fail.count, 0u);
  EXPECT_GT(s.last_inference_ms, 0);
}

TEST_F(BatchingTest, BatchesNeverExceedMaxRows) {
  model.BlockOn(&gate);
  options.batch_policy = Dynamic(4, Duration::zero());
  Scheduler& scheduler = Start();

  scheduler.Enqueue(MakeRequest("first", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  for (int i = 1; i <= 10; ++i) {
    scheduler.Enqueue(MakeRequest(std::to_string(i), {static_cast<float>(i)}, completions));
  }
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(11));

  EXPECT_THAT(model.batch_rows(), ElementsAre(1u, 4u, 4u, 2u));
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.inference_count, 11u);
  EXPECT_EQ(s.execution_count, 4u);
  EXPECT_EQ(s.batch_stats.at(4).compute_infer.count, 2u);
  EXPECT_EQ(s.batch_stats.at(2).compute_infer.count, 1u);
}

TEST(SchedulerTest, EveryRequestGetsItsOwnRowsUnderConcurrentLoad) {
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options("m:1", 2);
  options.batch_policy = Dynamic(8, std::chrono::microseconds(200));
  auto scheduler = std::make_unique<Scheduler>(options, &config, &model, &stats);

  // Request k of producer p carries 1 to 3 rows of values unique to it.
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 50;
  auto values_of = [](int p, int k) {
    std::vector<float> values;
    for (int r = 0; r <= k % 3; ++r) values.push_back(static_cast<float>(p * 10000 + k * 10 + r));
    return values;
  };
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int k = 0; k < kPerProducer; ++k) {
        scheduler->Enqueue(
            MakeRequest(std::to_string(p) + "/" + std::to_string(k), values_of(p, k), completions));
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  ASSERT_TRUE(completions.WaitFor(kProducers * kPerProducer));
  scheduler.reset();  // joins the instances: every call has been recorded

  uint64_t rows = 0;
  for (int p = 0; p < kProducers; ++p) {
    for (int k = 0; k < kPerProducer; ++k) {
      const std::string id = std::to_string(p) + "/" + std::to_string(k);
      const InferResponse response = completions.Of(id);
      ASSERT_TRUE(response.status.ok()) << id << ": " << response.status;
      EXPECT_EQ(Floats(response.outputs[0].tensor), Doubled(values_of(p, k))) << id;
      rows += values_of(p, k).size();
    }
  }
  const ModelStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.inference_count, rows);
  EXPECT_EQ(s.execution_count, static_cast<uint64_t>(model.calls()));
  uint64_t batches = 0;
  for (const auto& [size, per_size] : s.batch_stats) {
    EXPECT_LE(size, 8);
    batches += per_size.compute_infer.count;
  }
  EXPECT_EQ(batches, s.execution_count);
  EXPECT_EQ(s.success.count, static_cast<uint64_t>(kProducers * kPerProducer));
  for (size_t batch : model.batch_rows()) EXPECT_LE(batch, 8u);
}

TEST(SchedulerTest, StopRunsQueuedRequestsWithoutWaitingForMaxQueueDelay) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;  // never advanced: the delay could only end through Stop
  SchedulerOptions options = Options();
  options.batch_policy = Dynamic(8, std::chrono::hours(1));
  options.time = &time;
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f}, completions));
  scheduler.Enqueue(MakeRequest("c", {3.0f, 4.0f}, completions));
  EXPECT_EQ(completions.size(), 0u);
  scheduler.Stop();

  EXPECT_THAT(completions.ids(), ElementsAre("a", "b", "c"));
  EXPECT_THAT(model.batch_rows(), ElementsAre(4u));  // still one batch
  for (const Completions::Entry& entry : completions.entries()) {
    EXPECT_TRUE(entry.response.status.ok()) << entry.id << ": " << entry.response.status;
  }
}

}  // namespace
}  // namespace inferd
