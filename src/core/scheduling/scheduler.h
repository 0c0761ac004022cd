// A model version's queue, batcher and execution instances.
//
// Enqueue only takes a mutex and never waits on a model, so I/O threads call it directly.
// Each execution instance is a thread: it plans a batch from the queue (BatchPlanner), runs
// it on the shared BackendModel and answers every request in it. Requests whose deadline
// passes while queued are answered with the configured timeout status and never executed:
// a deadline watcher thread answers them on time even while every instance is busy on a long
// batch. A full queue refuses new requests at once.
//
// Thread-safety: all public methods are thread-safe.
// Ownership: the scheduler owns queued requests; `model`, `config` and `stats` must outlive
// it.
#ifndef INFERD_CORE_SCHEDULING_SCHEDULER_H_
#define INFERD_CORE_SCHEDULING_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/busy_poll.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "core/backend/async_backend_model.h"
#include "core/backend/backend.h"
#include "core/backend/infer_request.h"
#include "core/config/model_config.h"
#include "core/scheduling/batch_planner.h"
#include "core/scheduling/model_stats.h"
#include "core/scheduling/request_queue.h"

namespace inferd {

struct SchedulerOptions {
  std::string label;  // "mlp_scorer:1", for thread names and messages
  int instance_count = 1;
  BatchPolicy batch_policy;
  QueueConfig queue;
  bool preserve_ordering = false;
  // How long an idle instance watches the queue before it sleeps (common/busy_poll.h);
  // measured in real time even with an injected time source. Zero: sleep at once.
  Duration busy_poll = Duration::zero();
  // How far the watch may stretch to catch a client whose next request comes later than
  // busy_poll after each reply (PollBudget); at or below busy_poll it never stretches.
  Duration busy_poll_ceiling = Duration::zero();
  // How long an instance may sit idle before it gives back the engine's helper threads for
  // its calls (BackendModel::ReleaseCallerThreads): starting them again costs the next batch
  // tens of microseconds, keeping them slows every other model's threads (common/openmp_team.h).
  // Real time, as busy_poll.
  Duration release_engine_threads_after = std::chrono::milliseconds(100);
  const TimeSource* time = RealTime();
};

class Scheduler {
 public:
  Scheduler(SchedulerOptions options, const ModelConfig* config, BackendModel* model,
            ModelStats* stats);
  // Stops and joins; see Stop().
  ~Scheduler();

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a validated request. When it is refused (full queue: ResourceExhausted; stopping:
  // Unavailable) it is completed here, on the caller's thread.
  void Enqueue(std::unique_ptr<InferRequest> request);

  // Refuses new requests, runs every queued one without waiting for batches to fill, joins
  // the instances, then waits for every request an async model still holds to finish (their
  // callbacks use this scheduler).
  void Stop();

  size_t queue_depth() const;
  const BatchPolicy& batch_policy() const { return options_.batch_policy; }

 private:
  struct Completion {
    std::unique_ptr<InferRequest> request;
    InferResponse response;
  };

  void RunInstance();
  // Waits for work, polling for the instance's `poll` budget first; returns false when
  // stopped with nothing left to do.
  bool NextWork(PollBudget* poll, std::vector<PendingRequest>* batch,
                std::vector<PendingRequest>* expired);
  void WatchDeadlines();
  // Waits until a queued request's deadline passes; returns false once stopping (the
  // instances then answer whatever is left, expired requests included).
  bool NextExpired(std::vector<PendingRequest>* expired);
  void Execute(std::vector<PendingRequest> batch);
  // An AsyncBackendModel's path: each request is started alone and finished by its callback.
  void ExecuteAsync(std::vector<PendingRequest> batch);
  // What follows the engine for one request, on either path: the response (requested outputs
  // only), the statistics, and Deliver. `outputs` are the request's own (already scattered).
  void FinishRequest(PendingRequest pending, absl::StatusOr<std::vector<Tensor>> outputs,
                     int64_t batch_rows, const BatchTimes& times, TimePoint started,
                     TimePoint finished);
  void Expire(std::vector<PendingRequest> expired);
  // Answers a request that went through the queue, in arrival order if so configured.
  void Deliver(uint64_t sequence, Completion completion);

  const SchedulerOptions options_;
  const BatchPolicy draining_policy_;  // options_.batch_policy without the queue delay
  const ModelConfig* const config_;
  BackendModel* const model_;
  AsyncBackendModel* const async_;  // model_ itself, or null
  ModelStats* const stats_;

  mutable Mutex mu_;
  CondVar work_changed_;
  RequestQueue queue_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped under mu_ on every arrival and on Stop; atomic so that a busy-polling instance
  // can watch it without taking the lock.
  std::atomic<uint64_t> queue_version_{0};
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Requests an async model has started and not yet finished; Stop waits for 0.
  int64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  CondVar outstanding_changed_;

  // The deadline watcher sleeps until `watcher_wake_at_` (max: no deadline queued); an
  // arrival with an earlier deadline bumps `deadline_version_` and wakes it.
  CondVar deadline_changed_;
  TimePoint watcher_wake_at_ ABSL_GUARDED_BY(mu_) = TimePoint::max();
  uint64_t deadline_version_ ABSL_GUARDED_BY(mu_) = 0;

  // preserve_ordering: answers wait here until every earlier request is answered.
  Mutex order_mu_;
  uint64_t next_to_deliver_ ABSL_GUARDED_BY(order_mu_) = 0;
  std::map<uint64_t, Completion> waiting_ ABSL_GUARDED_BY(order_mu_);

  std::vector<std::thread> instances_;
  std::thread deadline_watcher_;
};

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_SCHEDULER_H_
