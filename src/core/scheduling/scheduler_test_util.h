// Shared fixtures for the Scheduler tests (scheduler_test.cc, scheduler_batching_test.cc,
// scheduler_queue_policy_test.cc): a fake model, a response collector and request helpers.
//
// Synchronisation here uses inferd::Mutex (std::mutex), never absl::Mutex or
// absl::Notification: Debian's Abseil is not built for ThreadSanitizer, and these tests run
// under it (scripts/tsan-tests).

#ifndef INFERD_CORE_SCHEDULING_SCHEDULER_TEST_UTIL_H_
#define INFERD_CORE_SCHEDULING_SCHEDULER_TEST_UTIL_H_

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
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
#include "core/scheduling/scheduler.h"
#include "gtest/gtest.h"

namespace inferd::testing {

// Generous bound for waits that should finish at once; reaching it means a hang, not a slow
// machine.
inline constexpr Duration kHangTimeout = std::chrono::seconds(10);

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
inline ModelConfig TestConfig(int instances = 1) {
  ModelConfig config;
  config.name = "m";
  config.backend = "fake";
  config.max_batch_size = 8;
  config.inputs = {{"x", DataType::kFp32, {-1}}};
  config.outputs = {{"doubled", DataType::kFp32, {-1}}, {"negated", DataType::kFp32, {-1}}};
  config.instances = {InstanceGroup{instances, "cpu"}};
  return config;
}

inline SchedulerOptions Options(std::string label = "m:1", int instances = 1) {
  SchedulerOptions options;
  options.label = std::move(label);
  options.instance_count = instances;
  return options;
}

inline BatchPolicy Dynamic(int64_t max_rows, Duration delay) {
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
  // An Execute whose input contains `value` fails with `status` (one poisoned request).
  void FailIfContains(float value, absl::Status status) {
    poison_ = value;
    poison_status_ = std::move(status);
  }
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
  // ReleaseCallerThreads calls so far, and the threads that made them.
  int releases() const {
    MutexLock lock(&mu_);
    return static_cast<int>(release_threads_.size());
  }
  std::vector<std::thread::id> release_threads() const {
    MutexLock lock(&mu_);
    return release_threads_;
  }
  // Waits until `n` ReleaseCallerThreads calls have been made; false on a hang.
  bool WaitForReleases(int n) {
    MutexLock lock(&mu_);
    return entered_.WaitUntil(&mu_, Clock::now() + kHangTimeout,
                              [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                                return static_cast<int>(release_threads_.size()) >= n;
                              });
  }
  void ReleaseCallerThreads() override {
    {
      MutexLock lock(&mu_);
      release_threads_.push_back(std::this_thread::get_id());
    }
    entered_.NotifyAll();
  }

  // The input of every call, in call order.
  std::vector<std::vector<float>> batches() const {
    MutexLock lock(&mu_);
    return batches_;
  }
  // The calling thread's voluntary context switches (sleeps) so far, at each call.
  std::vector<long> sleeps_at_calls() const {
    MutexLock lock(&mu_);
    return sleeps_at_calls_;
  }
  std::vector<size_t> batch_rows() const {
    std::vector<size_t> rows;
    for (const std::vector<float>& batch : batches()) rows.push_back(batch.size());
    return rows;
  }

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    Event* value_gate = nullptr;
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    {
      MutexLock lock(&mu_);
      ++calls_;
      sleeps_at_calls_.push_back(usage.ru_nvcsw);
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
    if (poison_) {
      for (int64_t i = 0; i < inputs[0].element_count(); ++i) {
        if (inputs[0].data_as<float>()[i] == *poison_) return poison_status_;
      }
    }
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
  std::optional<float> poison_;
  absl::Status poison_status_;
  Event* gate_ = nullptr;
  std::map<float, Event*> value_gates_;
  int rendezvous_ = 0;

  mutable Mutex mu_;
  CondVar entered_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread::id> release_threads_ ABSL_GUARDED_BY(mu_);
  bool rendezvous_timed_out_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::vector<float>> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<long> sleeps_at_calls_ ABSL_GUARDED_BY(mu_);
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

inline std::unique_ptr<InferRequest> MakeRequest(std::string id, std::vector<float> values,
                                                 Completions& completions) {
  auto request = std::make_unique<InferRequest>();
  Tensor x = Tensor::Allocate(DataType::kFp32, {static_cast<int64_t>(values.size())}).value();
  std::memcpy(x.mutable_data(), values.data(), x.byte_size());
  request->inputs.push_back({"x", std::move(x)});
  request->on_complete = completions.Callback(id);
  request->id = std::move(id);
  return request;
}

inline std::unique_ptr<InferRequest> WithPriority(std::unique_ptr<InferRequest> request,
                                                  int priority) {
  request->priority = priority;
  return request;
}

inline std::unique_ptr<InferRequest> WithTimeout(std::unique_ptr<InferRequest> request,
                                                 Duration timeout) {
  request->timeout_us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  return request;
}

inline std::vector<float> Floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data_as<float>(),
                            tensor.data_as<float>() + tensor.element_count());
}

inline std::vector<float> Doubled(std::vector<float> values) {
  for (float& v : values) v *= 2;
  return values;
}

inline int64_t Ns(Duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// What most scheduler tests set up, for TEST_F (through an alias named for the file's
// topic): a TestConfig() model on a FakeModel, its statistics and completions, a fake clock
// and default options. Each test adjusts `options` (and blocks the model on `gate` when it
// needs the instance busy) before Start().
class SchedulerFixture : public ::testing::Test {
 protected:
  Scheduler& Start() {
    scheduler_.emplace(options, &config, &model, &stats);
    return *scheduler_;
  }

  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  ModelStats stats;
  Completions completions;
  FakeTimeSource time;
  SchedulerOptions options = Options();

 private:
  std::optional<Scheduler> scheduler_;  // last: stopped before what it uses goes
};

}  // namespace inferd::testing

#endif  // INFERD_CORE_SCHEDULING_SCHEDULER_TEST_UTIL_H_
