#include "core/scheduling/batch_tuner.h"

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/cores.h"
#include "common/fake_time_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A model whose every Execute "takes" latency(batch) on a fake clock, and records the batch
// sizes it was given.
class TimedModel : public BackendModel {
 public:
  TimedModel(FakeTimeSource* time, std::function<Duration(int64_t)> latency)
      : time_(time), latency_(std::move(latency)) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    const int64_t batch = inputs[0].shape()[0];
    batches.push_back(batch);
    if (fail_at_batch == batch) return absl::InternalError("out of memory at this batch");
    time_->Advance(latency_(batch));
    return std::vector<Tensor>{Tensor::Allocate(DataType::kFp32, {batch, 1}).value()};
  }

  std::vector<int64_t> batches;
  int64_t fail_at_batch = 0;

 private:
  FakeTimeSource* const time_;
  const std::function<Duration(int64_t)> latency_;
};

// latency(b) = 10 + 2b ms: throughput grows with the batch, and so does latency.
Duration Linear(int64_t batch) { return std::chrono::milliseconds(10 + 2 * batch); }

ModelConfig TunedConfig(int max_batch_size, double slo_ms, int64_t delay_us = 0) {
  ModelConfig config;
  config.name = "m";
  config.backend = "fake";
  config.max_batch_size = max_batch_size;
  config.inputs = {{"x", DataType::kFp32, {4}}};
  config.outputs = {{"y", DataType::kFp32, {1}}};
  config.dynamic_batching.enabled = true;
  config.dynamic_batching.auto_tune = true;
  config.dynamic_batching.latency_slo_ms = slo_ms;
  config.dynamic_batching.max_queue_delay_us = delay_us;
  return config;
}

std::vector<int64_t> Sizes(const BatchTuning& tuning) {
  std::vector<int64_t> sizes;
  for (const BatchSizeMeasurement& m : tuning.table) sizes.push_back(m.batch_size);
  return sizes;
}

TEST(BatchTunerTest, ChoosesTheHighestThroughputWithinTheSlo) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  // 2 x (10 + 2b) <= 100 holds up to b = 20: 16 is the largest candidate within.
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(32, 100), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 16);
  EXPECT_DOUBLE_EQ(tuning->latency_slo_ms, 100);
  EXPECT_THAT(Sizes(*tuning), ElementsAre(1, 2, 4, 8, 16, 32));
  for (const BatchSizeMeasurement& m : tuning->table) {
    EXPECT_DOUBLE_EQ(m.latency_ms, 10.0 + 2.0 * m.batch_size) << "batch " << m.batch_size;
    EXPECT_DOUBLE_EQ(m.items_per_s, m.batch_size * 1000.0 / (10.0 + 2.0 * m.batch_size));
    EXPECT_EQ(m.within_slo, m.batch_size <= 16) << "batch " << m.batch_size;
  }
}

TEST(BatchTunerTest, QueueDelayCountsAgainstTheSlo) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  // 2 x (10 + 2b) + 20 <= 100 holds up to b = 10.
  absl::StatusOr<BatchTuning> tuning =
      TuneBatchSize(TunedConfig(32, 100, /*delay_us=*/20000), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 8);
  EXPECT_FALSE(tuning->table[4].within_slo);  // batch 16
}

// Throughput grows up to batch 32 (400 items/s), then stays flat.
Duration Saturating(int64_t batch) {
  return batch <= 16 ? Linear(batch) : std::chrono::microseconds(2500 * batch);
}

TEST(BatchTunerTest, PastTheSloMeasuresWhileThroughputGrowsForBacklogMode) {
  FakeTimeSource time;
  TimedModel model(&time, Saturating);
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(256, 100), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 16);  // 42 ms: the largest within the SLO
  // 32 runs 400 items/s against 381 at 16 (+5 %); 64 adds nothing, and stops the search.
  EXPECT_THAT(Sizes(*tuning), ElementsAre(1, 2, 4, 8, 16, 32, 64));
  EXPECT_EQ(tuning->backlog_batch_size, 32);
  // 16 rows per 42 ms is 381 items/s: 38.1 rows in one 100 ms SLO.
  EXPECT_EQ(tuning->backlog_rows, 39);
  for (int64_t batch : model.batches) EXPECT_LE(batch, 64);

  const BatchPolicy policy = ApplyTuning(PolicyFromConfig(TunedConfig(256, 100)), *tuning);
  EXPECT_EQ(policy.max_rows, 16);
  EXPECT_EQ(policy.backlog_rows, 39);
  EXPECT_EQ(policy.backlog_max_rows, 32);
}

TEST(BatchTunerTest, BacklogSizesStopAtTenTimesTheSlo) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  // SLO 20 ms: nothing fits (2 x 12 ms > 20), and backlog sizes may take up to 200 ms:
  // 64 (138 ms) is the last one measured and used; 128 (266 ms) is measured, not used.
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(256, 20), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 1);
  EXPECT_THAT(Sizes(*tuning), ElementsAre(1, 2, 4, 8, 16, 32, 64, 128));
  EXPECT_EQ(tuning->backlog_batch_size, 64);
  EXPECT_EQ(tuning->backlog_rows, 1);  // even batch 1 misses the SLO: any queue is a backlog
}

TEST(BatchTunerTest, NoBacklogModeWhenTheChosenSizeHasTheBestThroughput) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(16, 1000), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 16);
  EXPECT_EQ(tuning->backlog_batch_size, 16);
  const BatchPolicy policy = ApplyTuning(PolicyFromConfig(TunedConfig(16, 1000)), *tuning);
  EXPECT_EQ(policy.backlog_rows, 0);
}

TEST(BatchTunerTest, NeverExceedsMaxBatchSize) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(6, 10000), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_THAT(Sizes(*tuning), ElementsAre(1, 2, 4, 6));  // max_batch_size is a candidate
  EXPECT_EQ(tuning->chosen, 6);
  for (int64_t batch : model.batches) EXPECT_LE(batch, 6);
}

TEST(BatchTunerTest, MeasuresPreferredBatchSizesToo) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  ModelConfig config = TunedConfig(8, 10000);
  config.dynamic_batching.preferred_batch_sizes = {3, 8};
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(config, model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_THAT(Sizes(*tuning), ElementsAre(1, 2, 3, 4, 8));
}

TEST(BatchTunerTest, LargerBatchMustBeatTheBestByThreePercent) {
  FakeTimeSource time;
  // Batch 1: 100 items/s. Batch 2: 2.5 % more. Batch 4: 5 % more than batch 1.
  TimedModel model(&time, [](int64_t batch) {
    switch (batch) {
      case 1:
        return std::chrono::duration_cast<Duration>(std::chrono::microseconds(10000));
      case 2:
        return std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(19512195));
      default:
        return std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(38095238));
    }
  });
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(4, 1000), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  ASSERT_THAT(Sizes(*tuning), ElementsAre(1, 2, 4));
  EXPECT_NEAR(tuning->table[1].items_per_s / tuning->table[0].items_per_s, 1.025, 1e-6);
  EXPECT_NEAR(tuning->table[2].items_per_s / tuning->table[0].items_per_s, 1.05, 1e-6);
  EXPECT_EQ(tuning->chosen, 4);
}

TEST(BatchTunerTest, EqualThroughputKeepsTheSmallerBatch) {
  FakeTimeSource time;
  // 5 ms per row: the same items/s at every size, so batching only adds latency.
  TimedModel model(&time, [](int64_t batch) { return std::chrono::milliseconds(5 * batch); });
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(16, 1000), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 1);
}

TEST(BatchTunerTest, BatchOneIsChosenEvenWhenNothingMeetsTheSlo) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(32, 5), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 1);
  EXPECT_FALSE(tuning->table[0].within_slo);
  // Sizes over the SLO are still measured for backlog mode, up to 10 x the SLO (50 ms):
  // 16 takes 42 ms, 32 takes 74.
  EXPECT_THAT(Sizes(*tuning), ElementsAre(1, 2, 4, 8, 16, 32));
  EXPECT_EQ(tuning->backlog_batch_size, 16);
}

TEST(BatchTunerTest, ExecuteFailureFailsTheTuning) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  model.fail_at_batch = 4;
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(32, 100), model, time);
  EXPECT_EQ(tuning.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(tuning.status().message()), HasSubstr("out of memory"));
}

TEST(BatchTunerTest, RunsOnZeroInputsOfTheCandidateShape) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  ASSERT_TRUE(TuneBatchSize(TunedConfig(2, 1000), model, time).ok());
  // At least two untimed and five timed runs per size, sizes in increasing order.
  EXPECT_GE(model.batches.size(), 14u);
  EXPECT_EQ(model.batches.front(), 1);
  EXPECT_EQ(model.batches.back(), 2);
}

TEST(BatchTunerTest, PolicyFromConfigAndApplyTuning) {
  ModelConfig config = TunedConfig(32, 100, /*delay_us=*/1500);
  config.dynamic_batching.preferred_batch_sizes = {4, 32};
  BatchPolicy policy = PolicyFromConfig(config);
  EXPECT_TRUE(policy.dynamic);
  EXPECT_EQ(policy.max_rows, 32);
  EXPECT_EQ(policy.max_queue_delay, std::chrono::microseconds(1500));
  EXPECT_THAT(policy.preferred_batch_sizes, ElementsAre(4, 32));

  BatchTuning tuning;
  tuning.chosen = 8;
  policy = ApplyTuning(policy, tuning);
  EXPECT_TRUE(policy.dynamic);
  EXPECT_EQ(policy.max_rows, 8);
  EXPECT_EQ(policy.max_queue_delay, std::chrono::microseconds(1500));
  EXPECT_THAT(policy.preferred_batch_sizes, ElementsAre(8));
}

TEST(BatchTunerTest, PolicyOfAnUnbatchedModelRunsRequestsAlone) {
  ModelConfig config;
  const BatchPolicy policy = PolicyFromConfig(config);
  EXPECT_FALSE(policy.dynamic);
  EXPECT_EQ(policy.max_rows, 1);
}

TEST(BatchTunerTest, DescribeTuningMarksTheChosenSize) {
  FakeTimeSource time;
  TimedModel model(&time, Linear);
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(32, 100), model, time);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  const std::string text = DescribeTuning(*tuning);
  EXPECT_THAT(text, AllOf(HasSubstr("batch 1: 12.00 ms, 83 items/s, within SLO\n"),
                          HasSubstr("batch 16: 42.00 ms, 381 items/s, within SLO <- chosen"),
                          HasSubstr("batch 32: 74.00 ms, 432 items/s, over SLO")));
}

// A TimedModel that offers intra-op thread counts {2, 1}; its latency depends on the count
// in force, which it records per Execute.
class ThreadedModel : public TimedModel {
 public:
  ThreadedModel(FakeTimeSource* time, std::function<Duration(int64_t, int)> latency)
      : TimedModel(time, [this, latency](int64_t batch) { return latency(batch, threads); }) {}

  std::vector<int> IntraOpThreadChoices() const override { return {2, 1}; }
  void SetIntraOpThreads(int count) override { threads = count; }

  int threads = 2;
};

TEST(BatchTunerTest, KeepsOneThreadWhenItIsFasterAtTheChosenSize) {
  FakeTimeSource time;
  // Two threads: 10 + 2b ms. One thread: 10 + b ms, faster at every size.
  ThreadedModel model(&time, [](int64_t batch, int threads) {
    return std::chrono::milliseconds(10 + (threads == 1 ? 1 : 2) * batch);
  });
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(16, 200), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 16);
  EXPECT_EQ(tuning->backlog_batch_size, 16);
  ASSERT_EQ(tuning->thread_trials.size(), 1u);
  EXPECT_EQ(tuning->thread_trials[0].first, 1);
  EXPECT_EQ(tuning->thread_trials[0].second.batch_size, 16);
  EXPECT_DOUBLE_EQ(tuning->thread_trials[0].second.latency_ms, 26);
  EXPECT_EQ(tuning->intra_op_threads, 1);
  EXPECT_EQ(model.threads, 1);  // left set for serving
  // What the chosen size processes in one SLO, at the kept count: 16 rows / 26 ms x 200 ms.
  EXPECT_EQ(tuning->backlog_rows, 124);
  EXPECT_THAT(DescribeTuning(*tuning),
              AllOf(HasSubstr("batch 16 with 1 intra-op thread(s): 26.00 ms"),
                    HasSubstr("intra-op threads kept: 1")));
}

// The intra-op thread count the tuner leaves a ThreadedModel with when one thread takes
// `slowdown` times as long as two at every size (SLO 200 ms: 16 is chosen, no backlog size).
int ThreadsKeptWhenOneThreadIsSlowerBy(double slowdown) {
  FakeTimeSource time;
  ThreadedModel model(&time, [slowdown](int64_t batch, int threads) {
    const Duration two = std::chrono::milliseconds(10 + 2 * batch);
    return threads == 1 ? std::chrono::duration_cast<Duration>(two * slowdown) : two;
  });
  // 42 ms at batch 16 is not a small model, however few the cores.
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(16, 200), model, time);
  EXPECT_TRUE(tuning.ok()) << tuning.status();
  if (!tuning.ok()) return 0;
  EXPECT_EQ(tuning->thread_trials.size(), 1u);
  EXPECT_EQ(model.threads, tuning->intra_op_threads);  // left set for serving
  return tuning->intra_op_threads;
}

TEST(BatchTunerTest, OneThreadWinsATieWithinThreePercent) {
  // Within noise one thread is kept: it leaves a core free for I/O and other models.
  EXPECT_EQ(ThreadsKeptWhenOneThreadIsSlowerBy(1.02), 1);
}

TEST(BatchTunerTest, KeepsTheDefaultThreadsWhenOneThreadIsClearlySlower) {
  EXPECT_EQ(ThreadsKeptWhenOneThreadIsSlowerBy(1.10), 2);
}

TEST(BatchTunerTest, ModelsWithABacklogSizeKeepTheirThreadsUntried) {
  FakeTimeSource time;
  // 2 x (10 + 2b) <= 100 up to b = 20: 16 chosen, 32 adds throughput past the SLO (backlog).
  ThreadedModel model(&time, [](int64_t batch, int) { return Linear(batch); });
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(32, 100), model, time);

  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 16);
  EXPECT_EQ(tuning->backlog_batch_size, 32);
  EXPECT_TRUE(tuning->thread_trials.empty());
  EXPECT_EQ(tuning->intra_op_threads, 0);
  EXPECT_EQ(model.threads, 2);
}

TEST(BatchTunerTest, SmallModelKeepsOneThreadOnFewCoresThoughTwoAreFasterAlone) {
  FakeTimeSource time;
  // 0.1 ms on two threads, 0.15 ms on one, at every size: one thread is 33 % slower alone.
  ThreadedModel model(&time, [](int64_t, int threads) {
    return std::chrono::microseconds(threads == 1 ? 150 : 100);
  });
  absl::StatusOr<BatchTuning> tuning = TuneBatchSize(TunedConfig(16, 100), model, time);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(tuning->chosen, 16);
  ASSERT_EQ(tuning->thread_trials.size(), 1u);
  // The rule is for machines with at most 4 cores (CI's and this project's have 2).
  const bool few_cores = CoresAvailable() <= 4;
  EXPECT_EQ(tuning->intra_op_threads, few_cores ? 1 : 2);
  EXPECT_EQ(model.threads, tuning->intra_op_threads);
  if (few_cores) {
    EXPECT_THAT(DescribeTuning(*tuning), HasSubstr("intra-op threads kept: 1 (small model on"));
  }
}

}  // namespace
}  // namespace inferd
