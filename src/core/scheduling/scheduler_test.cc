#include "core/scheduling/scheduler.h"

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Generous bound for waits that should finish at once; reaching it means a hang, not a slow
// machine.
constexpr absl::Duration kHangTimeout = absl::Seconds(10);

// One FP32 input "x"; outputs "doubled" (2x) and "negated" (-x), both shaped like x.
ModelConfig TestConfig(int instances = 1) {
  ModelConfig config;
  config.name = "m";
  config.backend = "fake";
  config.max_batch_size = 8;
  config.inputs = {{"x", DataType::kFp32, {-1}}};
  config.outputs = {{"doubled", DataType::kFp32, {-1}}, {"negated", DataType::kFp32, {-1}}};
  config.instances = {InstanceGroup{instances, "cpu"}};
  return config;
}

// A BackendModel that computes TestConfig's outputs, and that a test can make fail, block
// until released, or wait until several calls are inside Execute at once.
class FakeModel : public BackendModel {
 public:
  void FailWith(absl::Status status) { failure_ = std::move(status); }
  // Every Execute waits for `gate` before computing.
  void BlockOn(absl::Notification* gate) { gate_ = gate; }
  // Every Execute waits (up to kHangTimeout) until `n` calls have entered Execute.
  void RendezvousOf(int n) { rendezvous_ = n; }

  // Notified when the first Execute has begun.
  absl::Notification first_entered;

  bool rendezvous_timed_out() const {
    absl::MutexLock lock(&mu_);
    return rendezvous_timed_out_;
  }
  int calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    {
      absl::MutexLock lock(&mu_);
      ++calls_;
    }
    {
      absl::MutexLock lock(&mu_);
      if (!first_entered.HasBeenNotified()) first_entered.Notify();  // once, under the lock
    }
    if (rendezvous_ > 0) {
      absl::MutexLock lock(&mu_);
      // Counts entries, not calls currently inside: a call that has passed the rendezvous
      // may leave before the others wake, and they must not go back to waiting. A call can
      // only pass once `rendezvous_` calls have entered, so they were all inside together.
      auto all_inside = [this]()
                            ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_ >= rendezvous_; };
      if (!mu_.AwaitWithTimeout(absl::Condition(&all_inside), kHangTimeout)) {
        rendezvous_timed_out_ = true;
      }
    }
    if (gate_ != nullptr) gate_->WaitForNotification();
    if (failure_) return *failure_;
    if (inputs.size() != 1) return absl::InternalError("expected one input");
    const Tensor& x = inputs[0];
    Tensor doubled = Tensor::Allocate(DataType::kFp32, x.shape()).value();
    Tensor negated = Tensor::Allocate(DataType::kFp32, x.shape()).value();
    for (int64_t i = 0; i < x.element_count(); ++i) {
      doubled.mutable_data_as<float>()[i] = 2 * x.data_as<float>()[i];
      negated.mutable_data_as<float>()[i] = -x.data_as<float>()[i];
    }
    return std::vector<Tensor>{doubled, negated};
  }

 private:
  std::optional<absl::Status> failure_;
  absl::Notification* gate_ = nullptr;
  int rendezvous_ = 0;

  mutable absl::Mutex mu_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  bool rendezvous_timed_out_ ABSL_GUARDED_BY(mu_) = false;
};

// Collects responses from whatever thread completes them.
class Completions {
 public:
  struct Entry {
    std::string id;
    InferResponse response;
    std::thread::id thread;
  };

  std::function<void(InferResponse)> Callback(std::string id) {
    return [this, id = std::move(id)](InferResponse response) {
      absl::MutexLock lock(&mu_);
      entries_.push_back({id, std::move(response), std::this_thread::get_id()});
    };
  }

  size_t size() const {
    absl::MutexLock lock(&mu_);
    return entries_.size();
  }

  // Waits until `n` responses have arrived; false on a hang.
  bool WaitFor(size_t n) const {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entries_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), kHangTimeout);
  }

  std::vector<Entry> entries() const {
    absl::MutexLock lock(&mu_);
    return entries_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<InferRequest> MakeRequest(std::string id, std::vector<float> values,
                                          Completions& completions) {
  auto request = std::make_unique<InferRequest>();
  Tensor x = Tensor::Allocate(DataType::kFp32, {static_cast<int64_t>(values.size())}).value();
  std::memcpy(x.mutable_data(), values.data(), x.byte_size());
  request->inputs.push_back({"x", std::move(x)});
  request->on_complete = completions.Callback(id);
  request->id = std::move(id);
  return request;
}

std::vector<float> Floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data_as<float>(),
                            tensor.data_as<float>() + tensor.element_count());
}

TEST(SchedulerTest, CompletesRequestsWithAllOutputsInConfigOrder) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Completions completions;
  Scheduler scheduler("m:1", &config, &model, 1);

  scheduler.Enqueue(MakeRequest("a", {1.0f, -2.5f}, completions));
  scheduler.Enqueue(MakeRequest("b", {3.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(2));

  const std::vector<Completions::Entry> entries = completions.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].id, "a");  // one instance: first in, first out
  EXPECT_EQ(entries[1].id, "b");
  const InferResponse& a = entries[0].response;
  ASSERT_TRUE(a.status.ok()) << a.status;
  ASSERT_EQ(a.outputs.size(), 2u);
  EXPECT_EQ(a.outputs[0].name, "doubled");
  EXPECT_THAT(a.outputs[0].tensor.shape(), ElementsAre(2));
  EXPECT_THAT(Floats(a.outputs[0].tensor), ElementsAre(2.0f, -5.0f));
  EXPECT_EQ(a.outputs[1].name, "negated");
  EXPECT_THAT(Floats(a.outputs[1].tensor), ElementsAre(-1.0f, 2.5f));
  const InferResponse& b = entries[1].response;
  ASSERT_TRUE(b.status.ok()) << b.status;
  EXPECT_THAT(Floats(b.outputs[0].tensor), ElementsAre(6.0f));
  // Completed by an execution thread, not the enqueueing one.
  EXPECT_NE(entries[0].thread, std::this_thread::get_id());
}

TEST(SchedulerTest, ReturnsOnlyRequestedOutputsInRequestedOrder) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Completions completions;
  Scheduler scheduler("m:1", &config, &model, 1);

  auto only_negated = MakeRequest("a", {4.0f}, completions);
  only_negated->requested_outputs = {"negated"};
  scheduler.Enqueue(std::move(only_negated));
  auto both_reversed = MakeRequest("b", {4.0f}, completions);
  both_reversed->requested_outputs = {"negated", "doubled"};
  scheduler.Enqueue(std::move(both_reversed));
  ASSERT_TRUE(completions.WaitFor(2));

  const std::vector<Completions::Entry> entries = completions.entries();
  ASSERT_EQ(entries[0].response.outputs.size(), 1u);
  EXPECT_EQ(entries[0].response.outputs[0].name, "negated");
  EXPECT_THAT(Floats(entries[0].response.outputs[0].tensor), ElementsAre(-4.0f));
  ASSERT_EQ(entries[1].response.outputs.size(), 2u);
  EXPECT_EQ(entries[1].response.outputs[0].name, "negated");
  EXPECT_EQ(entries[1].response.outputs[1].name, "doubled");
  EXPECT_THAT(Floats(entries[1].response.outputs[1].tensor), ElementsAre(8.0f));
}

TEST(SchedulerTest, PropagatesExecuteFailure) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  model.FailWith(absl::ResourceExhaustedError("out of tensor memory"));
  Completions completions;
  Scheduler scheduler("m:1", &config, &model, 1);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(1));

  const InferResponse response = completions.entries()[0].response;
  EXPECT_EQ(response.status, absl::ResourceExhaustedError("out of tensor memory"));
  EXPECT_TRUE(response.outputs.empty());
}

TEST(SchedulerTest, StopCompletesEveryQueuedRequestBeforeReturning) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  absl::Notification gate;
  model.BlockOn(&gate);
  Completions completions;
  Scheduler scheduler("m:1", &config, &model, 1);

  // The first request occupies the only instance; the other 19 wait in the queue.
  scheduler.Enqueue(MakeRequest("0", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitForNotificationWithTimeout(kHangTimeout));
  for (int i = 1; i < 20; ++i) {
    scheduler.Enqueue(MakeRequest(std::to_string(i), {static_cast<float>(i)}, completions));
  }
  EXPECT_EQ(scheduler.queue_depth(), 19u);

  // Probes sent while waiting for Stop to begin (see below); their own recorder.
  Completions probes;
  size_t completed_when_stop_returned = 0;
  size_t probes_when_stop_returned = 0;
  absl::Notification stop_returned;
  std::thread stopper([&] {
    scheduler.Stop();
    completed_when_stop_returned = completions.size();
    probes_when_stop_returned = probes.size();
    stop_returned.Notify();
  });

  // Wait, without sleeping, until Stop has begun: from then on Enqueue refuses at once, on
  // this thread. A probe accepted before that is queued behind the blocked instance, so it
  // cannot complete yet: the recorder grows only when a probe is refused.
  size_t accepted_probes = 0;
  bool refused = false;
  while (!refused && accepted_probes < 10000000u) {
    scheduler.Enqueue(MakeRequest("probe", {1.0f}, probes));
    refused = probes.size() > 0;
    if (!refused) ++accepted_probes;
    std::this_thread::yield();
  }
  const bool returned_while_blocked = stop_returned.HasBeenNotified();
  gate.Notify();
  stopper.join();

  ASSERT_TRUE(refused) << "Stop never began refusing requests";
  EXPECT_FALSE(returned_while_blocked) << "Stop returned while a request was executing";
  EXPECT_EQ(probes.entries()[0].response.status.code(), absl::StatusCode::kUnavailable);

  // Every request accepted before Stop, probes included, was answered before it returned.
  EXPECT_EQ(completed_when_stop_returned, 20u);
  EXPECT_EQ(probes_when_stop_returned, accepted_probes + 1);
  const std::vector<Completions::Entry> entries = completions.entries();
  ASSERT_EQ(entries.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(entries[i].id, std::to_string(i));
    ASSERT_TRUE(entries[i].response.status.ok()) << entries[i].response.status;
    EXPECT_THAT(Floats(entries[i].response.outputs[0].tensor), ElementsAre(2.0f * i));
  }
  const std::vector<Completions::Entry> probe_entries = probes.entries();
  for (size_t i = 1; i < probe_entries.size(); ++i) {  // [0] is the refused one
    EXPECT_TRUE(probe_entries[i].response.status.ok()) << probe_entries[i].response.status;
  }
  EXPECT_EQ(scheduler.queue_depth(), 0u);
}

TEST(SchedulerTest, EnqueueAfterStopCompletesAtOnceWithUnavailable) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Completions completions;
  Scheduler scheduler("mlp:3", &config, &model, 2);
  scheduler.Stop();

  scheduler.Enqueue(MakeRequest("late", {1.0f}, completions));

  // Completed synchronously, on this thread, without running the model.
  ASSERT_EQ(completions.size(), 1u);
  const Completions::Entry entry = completions.entries()[0];
  EXPECT_EQ(entry.thread, std::this_thread::get_id());
  EXPECT_EQ(entry.response.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(entry.response.status.message()),
              HasSubstr("model 'mlp:3' is shutting down"));
  EXPECT_EQ(model.calls(), 0);
}

TEST(SchedulerTest, StopIsIdempotent) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Scheduler scheduler("m:1", &config, &model, 2);
  scheduler.Stop();
  scheduler.Stop();  // and once more from the destructor
}

TEST(SchedulerTest, InstancesExecuteConcurrently) {
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  model.RendezvousOf(2);  // each call waits until both are inside Execute
  Completions completions;
  Scheduler scheduler("m:1", &config, &model, 2);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(2));

  EXPECT_FALSE(model.rendezvous_timed_out()) << "the two instances never ran at once";
  for (const Completions::Entry& entry : completions.entries()) {
    EXPECT_TRUE(entry.response.status.ok()) << entry.response.status;
  }
  const std::vector<Completions::Entry> entries = completions.entries();
  EXPECT_NE(entries[0].thread, entries[1].thread);
}

}  // namespace
}  // namespace inferd
