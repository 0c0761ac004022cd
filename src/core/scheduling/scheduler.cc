#include "core/scheduling/scheduler.h"

#include <algorithm>
#include <utility>

#include <pthread.h>

#include "common/busy_poll.h"
#include "common/strings.h"
#include "common/timed_wait.h"
#include "core/scheduling/batch_assembly.h"

namespace inferd {
namespace {

absl::Status TimeoutStatus(const QueueConfig& queue, const std::string& label,
                           const PendingRequest& pending) {
  const auto waited =
      std::chrono::duration_cast<std::chrono::microseconds>(*pending.deadline - pending.enqueued);
  std::string message = StrCat("the request waited in the queue of model '", label,
                               "' past its timeout of ", waited.count(), " us");
  if (queue.timeout_code == absl::StatusCode::kResourceExhausted) {
    return absl::ResourceExhaustedError(StrCat(message, "; the model is overloaded, retry later"));
  }
  return absl::DeadlineExceededError(std::move(message));
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions options, const ModelConfig* config, BackendModel* model,
                     ModelStats* stats)
    : options_(std::move(options)),
      draining_policy_([this] {
        BatchPolicy policy = options_.batch_policy;
        policy.max_queue_delay = Duration::zero();
        return policy;
      }()),
      config_(config),
      model_(model),
      async_(dynamic_cast<AsyncBackendModel*>(model)),
      stats_(stats),
      queue_(options_.queue.priority_levels,
             static_cast<size_t>(std::max<int64_t>(0, options_.queue.max_queue_size))) {
  for (int i = 0; i < options_.instance_count; ++i) {
    instances_.emplace_back([this, i] {
      // Named threads make `top -H` and debuggers readable: "mlp_scorer:1#0".
      const std::string name = StrCat(options_.label, "#", i).substr(0, 15);
      pthread_setname_np(pthread_self(), name.c_str());
      RunInstance();
    });
  }
  deadline_watcher_ = std::thread([this] {
    const std::string name = StrCat(options_.label, "#t").substr(0, 15);
    pthread_setname_np(pthread_self(), name.c_str());
    WatchDeadlines();
  });
}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Enqueue(std::unique_ptr<InferRequest> request) {
  absl::Status refused;
  bool wake_watcher = false;
  {
    MutexLock lock(&mu_);
    if (stopping_) {
      refused = absl::UnavailableError(StrCat("model '", options_.label, "' is shutting down"));
    } else if (queue_.full()) {
      refused = absl::ResourceExhaustedError(
          StrCat("the queue of model '", options_.label, "' is full (max_queue_size ",
                 options_.queue.max_queue_size, "); retry later"));
    } else {
      PendingRequest pending;
      pending.enqueued = options_.time->Now();
      pending.rows = config_->batched() ? request->inputs.front().tensor.shape()[0] : 1;
      if (request->priority > 0) {
        pending.priority = request->priority;
      } else if (request->fallback_priority > 0) {
        pending.priority = std::min(request->fallback_priority, options_.queue.priority_levels);
      } else {
        pending.priority = options_.queue.default_priority();
      }
      const int64_t timeout_us =
          request->timeout_us > 0 ? request->timeout_us : options_.queue.default_timeout_us;
      if (timeout_us > 0)
        pending.deadline = pending.enqueued + std::chrono::microseconds(timeout_us);
      pending.sequence = next_sequence_++;
      pending.request = std::move(request);
      if (pending.deadline && *pending.deadline < watcher_wake_at_) {
        watcher_wake_at_ = *pending.deadline;
        ++deadline_version_;
        wake_watcher = true;
      }
      queue_.Push(std::move(pending));
      ++queue_version_;
    }
  }
  if (refused.ok()) {
    // One instance is enough: an instance that takes a batch and leaves work behind wakes
    // the next one. Waking all of them per arrival cost a futex call and a context switch
    // per idle instance.
    work_changed_.NotifyOne();
    if (wake_watcher) deadline_changed_.NotifyOne();
    return;
  }
  stats_->RecordFailure(Duration::zero());
  request->on_complete(InferResponse{std::move(refused), {}});
}

void Scheduler::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    ++queue_version_;
  }
  work_changed_.NotifyAll();
  deadline_changed_.NotifyAll();
  for (std::thread& instance : instances_) {
    if (instance.joinable()) instance.join();
  }
  if (deadline_watcher_.joinable()) deadline_watcher_.join();
  MutexLock lock(&mu_);
  outstanding_changed_.Wait(
      &mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return outstanding_ == 0; });
}

size_t Scheduler::queue_depth() const {
  MutexLock lock(&mu_);
  return queue_.size();
}

void Scheduler::RunInstance() {
  std::vector<PendingRequest> batch;
  std::vector<PendingRequest> expired;
  PollBudget poll(options_.busy_poll, options_.busy_poll_ceiling);
  while (NextWork(&poll, &batch, &expired)) {
    if (!expired.empty()) Expire(std::move(expired));
    if (!batch.empty()) Execute(std::move(batch));
    batch.clear();
    expired.clear();
  }
}

bool Scheduler::NextWork(PollBudget* poll, std::vector<PendingRequest>* batch,
                         std::vector<PendingRequest>* expired) {
  MutexLock lock(&mu_);
  bool engine_threads_released = false;
  // Whether this instance found the queue empty, and when (real time, as the poll budget).
  bool ran_out = false;
  Clock::time_point ran_out_at{};
  for (;;) {
    const TimePoint now = options_.time->Now();
    queue_.TakeExpired(now, expired);
    // Stopping: run what is queued at once instead of waiting for batches to fill.
    BatchPlan plan = PlanBatch(queue_, stopping_ ? draining_policy_ : options_.batch_policy, now);
    if (!plan.positions.empty()) {
      *batch = queue_.Take(plan.positions);
      // Work left behind goes to an idle instance, if there is one (see Enqueue).
      if (!queue_.empty()) work_changed_.NotifyOne();
    }
    if (!batch->empty() || !expired->empty()) {
      // Only a lone client's round trip is worth stretching the poll for: with more
      // requests about, the next comes sooner anyway, and a longer spin would take the core
      // of the I/O threads that are bringing it.
      if (ran_out && batch->size() == 1 && queue_.empty()) {
        poll->Observe(Clock::now() - ran_out_at);
      } else {
        poll->Reset();
      }
      return true;
    }
    if (stopping_ && queue_.empty()) return false;

    // Deadlines are the watcher's job; an instance waits for arrivals or the batch delay.
    const std::optional<TimePoint> wake = plan.decide_again_at;
    const uint64_t seen = queue_version_.load(std::memory_order_relaxed);
    auto changed = [&] { return queue_version_.load(std::memory_order_acquire) != seen; };
    if (!wake && !ran_out) {
      ran_out = true;
      ran_out_at = Clock::now();
    } else if (wake && ran_out) {  // an arrival, held back by the batch delay: the gap ends
      if (queue_.size() == 1) {
        poll->Observe(Clock::now() - ran_out_at);
      } else {
        poll->Reset();
      }
      ran_out = false;
    }
    if (!wake && !engine_threads_released && poll->budget() > Duration::zero()) {
      // Watch for the next arrival without the lock before paying for a sleep and wake-up
      // (not once idle long enough to have released the engine's threads).
      mu_.Unlock();
      const bool arrived = BusyPoll(poll->budget(), changed);
      mu_.Lock();
      if (arrived) continue;
    }
    if (wake) {
      WaitUntil(*options_.time, work_changed_, &mu_, *wake, changed);
    } else if (!engine_threads_released) {
      const TimePoint idle_until = Clock::now() + options_.release_engine_threads_after;
      if (!work_changed_.WaitUntil(&mu_, idle_until, changed)) {
        mu_.Unlock();
        model_->ReleaseCallerThreads();
        mu_.Lock();
        engine_threads_released = true;
      }
    } else {
      work_changed_.Wait(&mu_, changed);
    }
  }
}

void Scheduler::WatchDeadlines() {
  std::vector<PendingRequest> expired;
  while (NextExpired(&expired)) {
    Expire(std::move(expired));
    expired.clear();
  }
}

bool Scheduler::NextExpired(std::vector<PendingRequest>* expired) {
  MutexLock lock(&mu_);
  for (;;) {
    if (stopping_) return false;
    const TimePoint now = options_.time->Now();
    queue_.TakeExpired(now, expired);
    if (!expired->empty()) return true;

    const std::optional<TimePoint> deadline = queue_.EarliestDeadline();
    watcher_wake_at_ = deadline.value_or(TimePoint::max());
    const uint64_t seen = deadline_version_;
    auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || deadline_version_ != seen;
    };
    if (deadline) {
      WaitUntil(*options_.time, deadline_changed_, &mu_, *deadline, changed);
    } else {
      deadline_changed_.Wait(&mu_, changed);
    }
  }
}

void Scheduler::Expire(std::vector<PendingRequest> expired) {
  const TimePoint now = options_.time->Now();
  for (PendingRequest& pending : expired) {
    stats_->RecordFailure(now - pending.enqueued);
    InferResponse response{TimeoutStatus(options_.queue, options_.label, pending), {}};
    Deliver(pending.sequence, {std::move(pending.request), std::move(response)});
  }
}

void Scheduler::Execute(std::vector<PendingRequest> batch) {
  if (async_ != nullptr) {
    ExecuteAsync(std::move(batch));
    return;
  }
  const TimeSource& time = *options_.time;
  const TimePoint start = time.Now();
  int64_t rows = 0;
  for (const PendingRequest& pending : batch) rows += pending.rows;

  BatchTimes times;
  absl::StatusOr<std::vector<Tensor>> inputs = GatherInputs(batch);
  const TimePoint gathered = time.Now();
  times.compute_input = gathered - start;
  absl::StatusOr<std::vector<Tensor>> outputs =
      inputs.ok() ? model_->Execute(*inputs) : inputs.status();
  const bool merged_and_failed = inputs.ok() && !outputs.ok() && batch.size() > 1;
  inputs = absl::CancelledError();  // release the merged inputs before answering
  if (merged_and_failed) {
    // One request's bad data (or a size the engine cannot take) must not fail the requests
    // that happened to be batched with it: each runs again alone, and only the ones that
    // fail alone get the error. Costs a second run of the batch's rows, on failure only.
    for (PendingRequest& pending : batch) {
      std::vector<PendingRequest> alone;
      alone.push_back(std::move(pending));
      Execute(std::move(alone));
    }
    return;
  }
  const TimePoint executed = time.Now();
  times.compute_infer = executed - gathered;
  if (outputs.ok() && outputs->size() != config_->outputs.size()) {
    // Backends promise one tensor per config output; a broken promise must not crash here.
    outputs = absl::InternalError(StrCat("model '", options_.label, "' returned ", outputs->size(),
                                         " outputs, config declares ", config_->outputs.size()));
  }
  absl::StatusOr<std::vector<std::vector<Tensor>>> per_request =
      outputs.ok() ? ScatterOutputs(*outputs, batch) : outputs.status();
  const TimePoint scattered = time.Now();
  times.compute_output = scattered - executed;
  if (per_request.ok()) stats_->RecordExecution(rows, times);

  for (size_t r = 0; r < batch.size(); ++r) {
    absl::StatusOr<std::vector<Tensor>> mine =
        per_request.ok() ? absl::StatusOr<std::vector<Tensor>>(std::move((*per_request)[r]))
                         : absl::StatusOr<std::vector<Tensor>>(per_request.status());
    FinishRequest(std::move(batch[r]), std::move(mine), rows, times, start, scattered);
  }
}

void Scheduler::ExecuteAsync(std::vector<PendingRequest> batch) {
  for (PendingRequest& pending : batch) {
    const TimePoint start = options_.time->Now();
    AsyncExecution execution;
    InferRequest& request = *pending.request;
    execution.inputs.reserve(request.inputs.size());
    for (NamedTensor& input : request.inputs) execution.inputs.push_back(input.tensor);
    execution.id = request.id;
    execution.tenant = request.tenant;
    execution.priority = request.priority;
    execution.deadline = pending.deadline;
    execution.time = options_.time;
    execution.cancelled = request.cancelled;
    {
      MutexLock lock(&mu_);
      ++outstanding_;
    }
    // The callback owns the pending request until it runs (exactly once, any thread).
    auto held = std::make_shared<PendingRequest>(std::move(pending));
    async_->ExecuteAsync(
        std::move(execution), [this, held, start](absl::StatusOr<std::vector<Tensor>> outputs) {
          const TimePoint finished = options_.time->Now();
          if (outputs.ok() && outputs->size() != config_->outputs.size()) {
            outputs = absl::InternalError(StrCat("model '", options_.label, "' returned ",
                                                 outputs->size(), " outputs, config declares ",
                                                 config_->outputs.size()));
          }
          BatchTimes times;
          times.compute_infer = finished - start;
          if (outputs.ok()) stats_->RecordExecution(held->rows, times);
          const int64_t rows = held->rows;
          FinishRequest(std::move(*held), std::move(outputs), rows, times, start, finished);
          // Last: Stop may return (and this scheduler go) once it is 0.
          MutexLock lock(&mu_);
          if (--outstanding_ == 0) outstanding_changed_.NotifyAll();
        });
  }
}

void Scheduler::FinishRequest(PendingRequest pending, absl::StatusOr<std::vector<Tensor>> outputs,
                              int64_t batch_rows, const BatchTimes& times, TimePoint started,
                              TimePoint finished) {
  InferRequest& request = *pending.request;
  request.inputs.clear();  // inputs may be views over the request body
  InferResponse response;
  response.batch_size = batch_rows;
  if (!outputs.ok()) {
    response.status = outputs.status();
    stats_->RecordFailure(finished - pending.enqueued);
  } else {
    std::vector<Tensor>& mine = *outputs;
    if (request.requested_outputs.empty()) {
      for (size_t i = 0; i < config_->outputs.size(); ++i) {
        response.outputs.push_back({config_->outputs[i].name, std::move(mine[i])});
      }
    } else {
      // In the order the client asked for them (validated: each exists, none twice).
      for (const std::string& name : request.requested_outputs) {
        for (size_t i = 0; i < config_->outputs.size(); ++i) {
          if (config_->outputs[i].name == name) response.outputs.push_back({name, mine[i]});
        }
      }
    }
    stats_->RecordSuccess(started - pending.enqueued, times, finished - pending.enqueued);
  }
  Deliver(pending.sequence, {std::move(pending.request), std::move(response)});
}

void Scheduler::Deliver(uint64_t sequence, Completion completion) {
  if (!options_.preserve_ordering) {
    completion.request->on_complete(std::move(completion.response));
    return;
  }
  // Completions only post to an I/O thread, so calling them under the lock is cheap, and it
  // keeps two instances from delivering their ready runs interleaved.
  MutexLock lock(&order_mu_);
  waiting_.emplace(sequence, std::move(completion));
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first == next_to_deliver_;
       it = waiting_.erase(it)) {
    it->second.request->on_complete(std::move(it->second.response));
    ++next_to_deliver_;
  }
}

}  // namespace inferd
