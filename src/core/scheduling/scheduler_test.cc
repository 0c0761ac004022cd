#include "core/scheduling/scheduler.h"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/fake_time_source.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Synchronisation in this file uses inferd::Mutex (std::mutex), never absl::Mutex or
// absl::Notification: Debian's Abseil is not built for ThreadSanitizer, and these tests run
// under it (scripts/tsan-tests).

namespace inferd {
namespace {

using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Generous bound for waits that should finish at once; reaching it means a hang, not a slow
// machine.
constexpr Duration kHangTimeout = std::chrono::seconds(10);

// A one-shot event.
class Event {
 public:
  void Notify() {
    {
      MutexLock lock(&mu_);
      notified_ = true;
    }
    cv_.NotifyAll();
  }
  bool HasBeenNotified() const {
    MutexLock lock(&mu_);
    return notified_;
  }
  void Wait() {
    MutexLock lock(&mu_);
    cv_.Wait(&mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return notified_; });
  }
  // False on a hang.
  bool WaitWithTimeout(Duration timeout) {
    MutexLock lock(&mu_);
    return cv_.WaitUntil(&mu_, Clock::now() + timeout,
                         [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return notified_; });
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
};

// One FP32 input "x"; outputs "doubled" (2x) and "negated" (-x), both shaped like x. The
// tests send 1-D inputs: with batching, each element is one row.
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

SchedulerOptions Options(std::string label = "m:1", int instances = 1) {
  SchedulerOptions options;
  options.label = std::move(label);
  options.instance_count = instances;
  return options;
}

BatchPolicy Dynamic(int64_t max_rows, Duration delay) {
  BatchPolicy policy;
  policy.dynamic = true;
  policy.max_rows = max_rows;
  policy.max_queue_delay = delay;
  return policy;
}

// A BackendModel that computes TestConfig's outputs and records every call, and that a test
// can make fail, block until released, or wait until several calls are inside Execute.
class FakeModel : public BackendModel {
 public:
  // Set before the scheduler starts.
  void FailWith(absl::Status status) { failure_ = std::move(status); }
  // Every Execute waits for `gate` before computing.
  void BlockOn(Event* gate) { gate_ = gate; }
  // An Execute whose first input value is `value` waits for `gate`.
  void BlockValueOn(float value, Event* gate) { value_gates_[value] = gate; }
  // Every Execute waits (up to kHangTimeout) until `n` calls have entered Execute.
  void RendezvousOf(int n) { rendezvous_ = n; }

  // Notified when the first Execute has begun.
  Event first_entered;

  // Waits until `n` calls have entered Execute; false on a hang.
  bool WaitForCalls(int n) {
    MutexLock lock(&mu_);
    return entered_.WaitUntil(&mu_, Clock::now() + kHangTimeout,
                              [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_ >= n; });
  }
  bool rendezvous_timed_out() const {
    MutexLock lock(&mu_);
    return rendezvous_timed_out_;
  }
  int calls() const {
    MutexLock lock(&mu_);
    return calls_;
  }
  // The input of every call, in call order.
  std::vector<std::vector<float>> batches() const {
    MutexLock lock(&mu_);
    return batches_;
  }
  std::vector<size_t> batch_rows() const {
    std::vector<size_t> rows;
    for (const std::vector<float>& batch : batches()) rows.push_back(batch.size());
    return rows;
  }

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    Event* value_gate = nullptr;
    {
      MutexLock lock(&mu_);
      ++calls_;
      std::vector<float> values;
      if (!inputs.empty()) {
        values.assign(inputs[0].data_as<float>(),
                      inputs[0].data_as<float>() + inputs[0].element_count());
      }
      if (!values.empty()) {
        auto it = value_gates_.find(values[0]);
        if (it != value_gates_.end()) value_gate = it->second;
      }
      batches_.push_back(std::move(values));
    }
    entered_.NotifyAll();
    first_entered.Notify();
    if (rendezvous_ > 0) {
      MutexLock lock(&mu_);
      // Counts entries, not calls currently inside: a call that has passed the rendezvous
      // may leave before the others wake, and they must not go back to waiting. A call can
      // only pass once `rendezvous_` calls have entered, so they were all inside together.
      if (!entered_.WaitUntil(
              &mu_, Clock::now() + kHangTimeout,
              [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_ >= rendezvous_; })) {
        rendezvous_timed_out_ = true;
      }
    }
    if (gate_ != nullptr) gate_->Wait();
    if (value_gate != nullptr) value_gate->Wait();
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
  Event* gate_ = nullptr;
  std::map<float, Event*> value_gates_;
  int rendezvous_ = 0;

  mutable Mutex mu_;
  CondVar entered_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  bool rendezvous_timed_out_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::vector<float>> batches_ ABSL_GUARDED_BY(mu_);
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
      {
        MutexLock lock(&mu_);
        entries_.push_back({id, std::move(response), std::this_thread::get_id()});
      }
      changed_.NotifyAll();
    };
  }

  size_t size() const {
    MutexLock lock(&mu_);
    return entries_.size();
  }

  // Waits until `n` responses have arrived; false on a hang.
  bool WaitFor(size_t n) {
    MutexLock lock(&mu_);
    return changed_.WaitUntil(
        &mu_, Clock::now() + kHangTimeout,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entries_.size() >= n; });
  }

  std::vector<Entry> entries() const {
    MutexLock lock(&mu_);
    return entries_;
  }

  std::vector<std::string> ids() const {
    std::vector<std::string> ids;
    for (const Entry& entry : entries()) ids.push_back(entry.id);
    return ids;
  }

  // The response to request `id`; fails the test when there is not exactly one.
  InferResponse Of(const std::string& id) const {
    std::optional<InferResponse> found;
    for (const Entry& entry : entries()) {
      if (entry.id != id) continue;
      EXPECT_FALSE(found.has_value()) << "two responses to " << id;
      found = entry.response;
    }
    EXPECT_TRUE(found.has_value()) << "no response to " << id;
    return found.value_or(InferResponse{absl::UnknownError("no response"), {}});
  }

 private:
  mutable Mutex mu_;
  CondVar changed_;
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

std::unique_ptr<InferRequest> WithPriority(std::unique_ptr<InferRequest> request, int priority) {
  request->priority = priority;
  return request;
}

std::unique_ptr<InferRequest> WithTimeout(std::unique_ptr<InferRequest> request, Duration timeout) {
  request->timeout_us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  return request;
}

std::vector<float> Floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data_as<float>(),
                            tensor.data_as<float>() + tensor.element_count());
}

std::vector<float> Doubled(std::vector<float> values) {
  for (float& v : values) v *= 2;
  return values;
}

int64_t Ns(Duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

// --- basics ---------------------------------------------------------------------------------

TEST(SchedulerTest, CompletesRequestsWithAllOutputsInConfigOrder) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);

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
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);

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
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(1));

  const InferResponse response = completions.entries()[0].response;
  EXPECT_EQ(response.status, absl::ResourceExhaustedError("out of tensor memory"));
  EXPECT_TRUE(response.outputs.empty());
  const ModelStatsSnapshot snapshot = stats.Snapshot();
  EXPECT_EQ(snapshot.fail.count, 1u);
  EXPECT_EQ(snapshot.success.count, 0u);
  EXPECT_EQ(snapshot.execution_count, 0u);  // a failed call is not an execution
}

TEST(SchedulerTest, ExecuteFailureReachesEveryRequestOfTheBatch) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  model.FailWith(absl::InternalError("kernel exploded"));
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.batch_policy = Dynamic(8, Duration::zero());
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("first", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f, 3.0f}, completions));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(3));

  EXPECT_THAT(model.batch_rows(), ElementsAre(1u, 3u));
  for (const Completions::Entry& entry : completions.entries()) {
    EXPECT_EQ(entry.response.status, absl::InternalError("kernel exploded")) << entry.id;
  }
  EXPECT_EQ(stats.Snapshot().fail.count, 3u);
}

TEST(SchedulerTest, StopCompletesEveryQueuedRequestBeforeReturning) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  Completions probes;  // probes sent while waiting for Stop to begin (see below)
  Scheduler scheduler(Options(), &config, &model, &stats);

  // The first request occupies the only instance; the other 19 wait in the queue.
  scheduler.Enqueue(MakeRequest("0", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  for (int i = 1; i < 20; ++i) {
    scheduler.Enqueue(MakeRequest(std::to_string(i), {static_cast<float>(i)}, completions));
  }
  EXPECT_EQ(scheduler.queue_depth(), 19u);

  size_t completed_when_stop_returned = 0;
  size_t probes_when_stop_returned = 0;
  Event stop_returned;
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
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options("mlp:3", 2), &config, &model, &stats);
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
  ModelStats stats;
  Scheduler scheduler(Options("m:1", 2), &config, &model, &stats);
  scheduler.Stop();
  scheduler.Stop();  // and once more from the destructor
}

TEST(SchedulerTest, InstancesExecuteConcurrently) {
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  model.RendezvousOf(2);  // each call waits until both are inside Execute
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options("m:1", 2), &config, &model, &stats);

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

// --- dynamic batching -----------------------------------------------------------------------

TEST(SchedulerTest, BatchesRequestsQueuedWhileTheInstanceIsBusy) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options();
  options.batch_policy = Dynamic(8, Duration::zero());
  options.time = &time;
  Scheduler scheduler(options, &config, &model, &stats);

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

TEST(SchedulerTest, BatchesNeverExceedMaxRows) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.batch_policy = Dynamic(4, Duration::zero());
  Scheduler scheduler(options, &config, &model, &stats);

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

// --- queue policy ---------------------------------------------------------------------------

TEST(SchedulerTest, FullQueueRefusesSynchronouslyWithResourceExhausted) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options("mlp:2");
  options.queue.max_queue_size = 2;
  Scheduler scheduler(options, &config, &model, &stats);

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

TEST(SchedulerTest, ExpiredRequestGetsDeadlineExceededAndNeverRuns) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options();
  options.time = &time;
  Scheduler scheduler(options, &config, &model, &stats);

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

TEST(SchedulerTest, ExpiredRequestGetsResourceExhaustedWhenTimeoutStatusIs429) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options();
  options.time = &time;
  options.queue.timeout_status = 429;
  Scheduler scheduler(options, &config, &model, &stats);

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

TEST(SchedulerTest, QueueDefaultTimeoutAppliesToRequestsWithoutTheirOwn) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options();
  options.time = &time;
  options.queue.default_timeout_us = 5000;
  Scheduler scheduler(options, &config, &model, &stats);

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

TEST(SchedulerTest, RequestExpiresWhileWaitingForABatchToFill) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options();
  options.time = &time;
  options.batch_policy = Dynamic(8, std::chrono::hours(1));
  Scheduler scheduler(options, &config, &model, &stats);

  // The idle instance waits for the earlier of the batch delay and the deadline.
  scheduler.Enqueue(WithTimeout(MakeRequest("late", {1.0f}, completions), milliseconds(1)));
  time.Advance(milliseconds(1));
  ASSERT_TRUE(completions.WaitFor(1));

  EXPECT_EQ(completions.Of("late").status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(model.calls(), 0);
}

// --- priorities and ordering ----------------------------------------------------------------

TEST(SchedulerTest, HigherPriorityRequestQueuedLaterRunsFirst) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.queue.priority_levels = 2;
  Scheduler scheduler(options, &config, &model, &stats);

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

TEST(SchedulerTest, DefaultPriorityLevelFromTheQueueConfig) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.queue.priority_levels = 3;
  options.queue.default_priority_level = 2;
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("running", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(WithPriority(MakeRequest("lowest", {1.0f}, completions), 3));
  scheduler.Enqueue(MakeRequest("default", {2.0f}, completions));  // level 2
  scheduler.Enqueue(WithPriority(MakeRequest("high", {3.0f}, completions), 1));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(4));

  EXPECT_THAT(completions.ids(), ElementsAre("running", "high", "default", "lowest"));
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
