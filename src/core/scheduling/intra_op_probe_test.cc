#include "core/scheduling/intra_op_probe.h"

#include <chrono>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/fake_time_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using Micros = std::chrono::microseconds;

// A model whose Execute "takes" latency(batch, threads) on a fake clock; it offers the
// counts {2, 1} unless `fixed`, and records each run's (batch, threads).
class ProbedModel : public BackendModel {
 public:
  ProbedModel(FakeTimeSource* time, std::function<Duration(int64_t, int)> latency)
      : time_(time), latency_(std::move(latency)) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    const int64_t batch = inputs[0].shape()[0];
    runs.emplace_back(batch, threads);
    if (fail) return absl::InternalError("engine failed");
    Duration latency = latency_(batch, threads);
    if (!stalls.empty()) {  // a run the machine descheduled
      latency += stalls.front();
      stalls.erase(stalls.begin());
    }
    time_->Advance(latency);
    return std::vector<Tensor>{Tensor::Allocate(DataType::kFp32, {batch, 1}).value()};
  }
  std::vector<int> IntraOpThreadChoices() const override {
    return fixed ? std::vector<int>{} : std::vector<int>{2, 1};
  }
  void SetIntraOpThreads(int count) override { threads = count; }
  void AdaptIntraOpThreads() override { adapting = true; }
  int intra_op_threads() const override { return threads; }

  int threads = 2;
  bool adapting = false;  // AdaptIntraOpThreads was called
  bool fixed = false;
  bool fail = false;
  std::vector<Duration> stalls;
  std::vector<std::pair<int64_t, int>> runs;

 private:
  FakeTimeSource* const time_;
  const std::function<Duration(int64_t, int)> latency_;
};

ModelConfig Batched(int max_batch_size) {
  ModelConfig config;
  config.name = "m";
  config.max_batch_size = max_batch_size;
  config.inputs = {{"x", DataType::kFp32, {4}}};
  config.outputs = {{"y", DataType::kFp32, {1}}};
  return config;
}

// mlp_scorer-like: 5 us per row on two threads, 7 us on one (one thread is slower alone).
Duration Small(int64_t batch, int threads) { return Micros((threads == 1 ? 7 : 5) * batch); }
// resnet18-like: 25 ms per image on two threads.
Duration Large(int64_t batch, int threads) {
  return Micros(25'000 * batch * (threads == 1 ? 2 : 1));
}

TEST(IntraOpProbeTest, ASmallModelOnFewCoresKeepsOneThread) {
  FakeTimeSource time;
  ProbedModel model(&time, Small);
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(32), model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 1);
  EXPECT_EQ(model.threads, 1);  // left set for serving
  ASSERT_EQ(choice->probe.size(), 2u);
  EXPECT_EQ(choice->probe[0].batch_size, 1);
  EXPECT_EQ(choice->probe[0].threads, 2);
  EXPECT_EQ(choice->probe[1].batch_size, 32);
  EXPECT_EQ(choice->probe[1].threads, 1);
  EXPECT_DOUBLE_EQ(choice->probe[1].fastest_ms, 0.224);
  EXPECT_THAT(choice->reason, HasSubstr("batch 32 takes 0.224 ms on one thread"));
  // One untimed and one timed run each: the first timed run already answered.
  EXPECT_THAT(model.runs,
              ElementsAre(std::pair<int64_t, int>{1, 2}, std::pair<int64_t, int>{1, 2},
                          std::pair<int64_t, int>{32, 1}, std::pair<int64_t, int>{32, 1}));
  EXPECT_FALSE(model.adapting);  // one thread is the choice for serving, not a start
}

TEST(IntraOpProbeTest, ALargeModelKeepsItsThreadsAfterOneShortProbe) {
  FakeTimeSource time;
  ProbedModel model(&time, Large);
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(8), model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 2);
  EXPECT_EQ(model.threads, 2);
  // Batch 1 on two threads, then on one: slow on both, so the model is large.
  ASSERT_EQ(choice->probe.size(), 2u);
  EXPECT_DOUBLE_EQ(choice->probe[0].fastest_ms, 25);
  EXPECT_EQ(choice->probe[0].runs, 2);  // 50 ms of runs is the budget
  EXPECT_EQ(choice->probe[1].threads, 1);
  EXPECT_DOUBLE_EQ(choice->probe[1].fastest_ms, 50);
  EXPECT_THAT(choice->reason, HasSubstr("not a small model"));
  for (const auto& [batch, threads] : model.runs) EXPECT_EQ(batch, 1);
  // Kept several threads: later runs choose among them from their own times.
  EXPECT_TRUE(model.adapting);
  EXPECT_THAT(choice->reason, HasSubstr("later runs choose"));
}

// A busy neighbour during the load: the two-thread team waits at every barrier for the
// member the kernel descheduled, so each run of the small model takes milliseconds on two
// threads (every run, so the fastest of several does not help), while one thread is quick.
TEST(IntraOpProbeTest, ATeamSlowedByABusyCoreDoesNotMakeASmallModelLookLarge) {
  FakeTimeSource time;
  ProbedModel model(&time, [](int64_t batch, int threads) {
    return threads == 2 ? Micros(11'500) : Small(batch, threads);
  });
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(32), model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 1);
  EXPECT_EQ(model.threads, 1);
  EXPECT_FALSE(model.adapting);
  EXPECT_THAT(choice->reason, HasSubstr("batch 32 takes 0.224 ms on one thread"));
  EXPECT_THAT(choice->reason, HasSubstr("batch 1 took 11.5 ms on 2 threads but 0.007 ms on one"));
}

TEST(IntraOpProbeTest, AModelSmallAloneButLargeAtItsLargestBatchRestoresTheCount) {
  FakeTimeSource time;
  // 0.1 ms per row: batch 1 is small, batch 64 on one thread takes 12.8 ms.
  ProbedModel model(
      &time, [](int64_t batch, int threads) { return Micros((threads == 1 ? 200 : 100) * batch); });
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(64), model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 2);
  EXPECT_EQ(model.threads, 2);
  ASSERT_EQ(choice->probe.size(), 2u);
  EXPECT_DOUBLE_EQ(choice->probe[1].fastest_ms, 12.8);
  EXPECT_EQ(choice->probe[1].runs, 4);  // 51.2 ms: past the budget
  EXPECT_THAT(choice->reason, HasSubstr("large enough to use 2"));
  EXPECT_TRUE(model.adapting);
}

TEST(IntraOpProbeTest, DescheduledRunsDoNotMakeASmallModelLookLarge) {
  FakeTimeSource time;
  ProbedModel model(&time, Small);
  // The untimed run of batch 1, then two timed ones lose 8 ms each to the scheduler; so do
  // the first three timed runs at batch 32.
  model.stalls = {Duration(0),
                  std::chrono::milliseconds(8),
                  std::chrono::milliseconds(8),
                  Duration(0),  // batch 1's third timed run is quick
                  Duration(0),  // batch 32, untimed
                  std::chrono::milliseconds(8),
                  std::chrono::milliseconds(8),
                  std::chrono::milliseconds(8)};
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(32), model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 1);
  EXPECT_EQ(choice->probe[0].runs, 3);
  EXPECT_EQ(choice->probe[1].runs, 4);
  EXPECT_DOUBLE_EQ(choice->probe[1].fastest_ms, 0.224);
}

TEST(IntraOpProbeTest, ManyCoresKeepTheBackendsCountUntimed) {
  FakeTimeSource time;
  ProbedModel model(&time, Small);
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(32), model, time, 16);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 2);
  EXPECT_THAT(choice->probe, IsEmpty());
  EXPECT_THAT(model.runs, IsEmpty());
  EXPECT_THAT(choice->reason, HasSubstr("16 cores"));
  EXPECT_TRUE(model.adapting);
}

TEST(IntraOpProbeTest, AFixedCountIsReportedAndNotTimed) {
  FakeTimeSource time;
  ProbedModel model(&time, Small);
  model.fixed = true;
  model.threads = 3;
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(32), model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 3);
  EXPECT_THAT(model.runs, IsEmpty());
  EXPECT_THAT(choice->reason, HasSubstr("intra_op_threads"));
  EXPECT_FALSE(model.adapting);  // a count the configuration fixed is used as written
}

TEST(IntraOpProbeTest, AnUnbatchedModelIsTimedAtBatchOne) {
  FakeTimeSource time;
  ProbedModel model(&time, Small);
  ModelConfig config = Batched(0);
  config.inputs = {{"x", DataType::kFp32, {1, 4}}};
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(config, model, time, 2);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->threads, 1);
  EXPECT_THAT(choice->reason, HasSubstr("batch 1 takes"));
}

TEST(IntraOpProbeTest, AFailedRunFailsAndRestoresTheCount) {
  FakeTimeSource time;
  ProbedModel model(&time, Small);
  model.fail = true;
  absl::StatusOr<IntraOpChoice> choice = ChooseIntraOpThreads(Batched(32), model, time, 2);
  EXPECT_EQ(choice.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(model.threads, 2);
}

}  // namespace
}  // namespace inferd
