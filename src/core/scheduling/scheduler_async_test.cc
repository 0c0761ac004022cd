// The scheduler's path for an AsyncBackendModel (a pipeline): requests are started on an
// instance and answered from the model's callback, on another thread.
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "core/backend/async_backend_model.h"
#include "core/scheduling/scheduler.h"
#include "core/scheduling/scheduler_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using testing::Completions;
using testing::Event;
using testing::Floats;
using testing::MakeRequest;
using testing::Options;
using testing::TestConfig;

// Keeps every request it is given until the test answers them (doubled, negated), each from
// a thread of its own.
class HeldAsyncModel : public BackendModel, public AsyncBackendModel {
 public:
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor>) override {
    return absl::InternalError("the scheduler must take the async path");
  }
  void ExecuteAsync(AsyncExecution execution, AsyncDone done) override {
    MutexLock lock(&mu_);
    held_.push_back({std::move(execution), std::move(done)});
    changed_.NotifyAll();
  }
  bool WaitForHeld(size_t n) {
    MutexLock lock(&mu_);
    return changed_.WaitUntil(&mu_, Clock::now() + testing::kHangTimeout,
                              [&]()
                                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return held_.size() >= n; });
  }
  // Answers every held request from a new thread, after `delay`.
  std::vector<std::thread> AnswerAll(Duration delay) {
    std::vector<Held> held;
    {
      MutexLock lock(&mu_);
      held.swap(held_);
    }
    std::vector<std::thread> threads;
    for (Held& h : held) {
      threads.emplace_back([h = std::move(h), delay]() mutable {
        std::this_thread::sleep_for(delay);
        const Tensor& x = h.execution.inputs[0];
        Tensor doubled = Tensor::Allocate(DataType::kFp32, x.shape()).value();
        Tensor negated = Tensor::Allocate(DataType::kFp32, x.shape()).value();
        for (int64_t i = 0; i < x.element_count(); ++i) {
          doubled.mutable_data_as<float>()[i] = 2 * x.data_as<float>()[i];
          negated.mutable_data_as<float>()[i] = -x.data_as<float>()[i];
        }
        h.done(std::vector<Tensor>{std::move(doubled), std::move(negated)});
      });
    }
    return threads;
  }
  std::vector<AsyncExecution> held() {
    MutexLock lock(&mu_);
    std::vector<AsyncExecution> executions;
    for (const Held& h : held_) executions.push_back(h.execution);
    return executions;
  }

 private:
  struct Held {
    AsyncExecution execution;
    AsyncDone done;
  };
  Mutex mu_;
  CondVar changed_;
  std::vector<Held> held_ ABSL_GUARDED_BY(mu_);
};

TEST(SchedulerAsyncTest, InstanceStartsTheNextRequestWithoutWaitingForTheAnswer) {
  const ModelConfig config = TestConfig();
  HeldAsyncModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);
  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f}, completions));
  // One instance, both started: it did not wait for "a"'s answer.
  ASSERT_TRUE(model.WaitForHeld(2));
  EXPECT_EQ(completions.size(), 0u);
  for (std::thread& t : model.AnswerAll(Duration::zero())) t.join();
  ASSERT_TRUE(completions.WaitFor(2));
  const InferResponse a = completions.Of("a");
  ASSERT_TRUE(a.status.ok()) << a.status;
  ASSERT_EQ(a.outputs.size(), 2u);
  EXPECT_EQ(a.outputs[0].name, "doubled");
  EXPECT_EQ(Floats(a.outputs[0].tensor), std::vector<float>{2.0f});
  EXPECT_EQ(stats.Snapshot().success.count, 2u);
}

TEST(SchedulerAsyncTest, StopWaitsForOutstandingCallbacks) {
  const ModelConfig config = TestConfig();
  HeldAsyncModel model;
  ModelStats stats;
  Completions completions;
  auto scheduler = std::make_unique<Scheduler>(Options(), &config, &model, &stats);
  scheduler->Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(model.WaitForHeld(1));
  std::vector<std::thread> answering = model.AnswerAll(std::chrono::milliseconds(100));
  scheduler->Stop();
  // Stop returned only after the callback had answered (it uses the scheduler).
  EXPECT_EQ(completions.size(), 1u);
  scheduler.reset();
  for (std::thread& t : answering) t.join();
  EXPECT_TRUE(completions.Of("a").status.ok());
}

TEST(SchedulerAsyncTest, FailureFromTheCallbackReachesTheRequestAndTheStatistics) {
  const ModelConfig config = TestConfig();
  class FailingModel : public BackendModel, public AsyncBackendModel {
   public:
    absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor>) override {
      return absl::InternalError("sync path");
    }
    void ExecuteAsync(AsyncExecution, AsyncDone done) override {
      done(absl::UnavailableError("step model gone"));
    }
  } model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);
  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(1));
  EXPECT_EQ(completions.Of("a").status.code(), absl::StatusCode::kUnavailable);
  scheduler.Stop();
  EXPECT_EQ(stats.Snapshot().fail.count, 1u);
}

TEST(SchedulerAsyncTest, PassesDeadlinePriorityAndIdToTheModel) {
  const ModelConfig config = TestConfig();
  HeldAsyncModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);
  auto request = MakeRequest("r7", {1.0f}, completions);
  request->timeout_us = 5'000'000;
  request->priority = 1;
  request->tenant = "acme";
  scheduler.Enqueue(std::move(request));
  ASSERT_TRUE(model.WaitForHeld(1));
  const std::vector<AsyncExecution> held = model.held();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].id, "r7");
  EXPECT_EQ(held[0].priority, 1);
  EXPECT_EQ(held[0].tenant, "acme");
  ASSERT_TRUE(held[0].deadline.has_value());
  EXPECT_GT(*held[0].deadline, Clock::now() + std::chrono::seconds(4));
  for (std::thread& t : model.AnswerAll(Duration::zero())) t.join();
  ASSERT_TRUE(completions.WaitFor(1));
}

}  // namespace
}  // namespace inferd
