// A model's request queue and the execution instances that drain it.
//
// Enqueue only takes a mutex and never waits on a model, so I/O threads can call it. Each
// execution instance is a thread that takes the oldest request, runs it on the shared
// BackendModel and completes it. (Dynamic batching builds on this queue; see issue 3.)
//
// Thread-safety: all public methods are safe to call from any thread.
// Ownership: the scheduler owns queued requests; `model` and `config` must outlive it.
#ifndef INFERD_CORE_SCHEDULING_SCHEDULER_H_
#define INFERD_CORE_SCHEDULING_SCHEDULER_H_

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/backend.h"
#include "core/infer_request.h"
#include "core/model_config.h"

namespace inferd {

class Scheduler {
 public:
  // Starts `instance_count` execution threads named after `model_label` ("mlp_scorer:1").
  Scheduler(std::string model_label, const ModelConfig* config, BackendModel* model,
            int instance_count);
  // Stops and joins; see Stop().
  ~Scheduler();

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a validated request. On error the request is completed here, on the caller's
  // thread, with that error (Unavailable once Stop has begun).
  void Enqueue(std::unique_ptr<InferRequest> request);

  // Refuses new requests, lets the instances finish every queued one, then joins them.
  void Stop();

  size_t queue_depth() const;

 private:
  void RunInstance();
  void Execute(InferRequest& request);

  const std::string model_label_;
  const ModelConfig* const config_;
  BackendModel* const model_;

  mutable absl::Mutex mu_;
  std::deque<std::unique_ptr<InferRequest>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::vector<std::thread> instances_;
};

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_SCHEDULER_H_
