#include "core/scheduling/scheduler.h"

#include <utility>

#include <pthread.h>

#include "common/strings.h"

namespace inferd {

Scheduler::Scheduler(std::string model_label, const ModelConfig* config, BackendModel* model,
                     int instance_count)
    : model_label_(std::move(model_label)), config_(config), model_(model) {
  for (int i = 0; i < instance_count; ++i) {
    instances_.emplace_back([this, i] {
      // Named threads make `top -H` and debuggers readable: "mlp_scorer:1#0".
      const std::string name = StrCat(model_label_, "#", i).substr(0, 15);
      pthread_setname_np(pthread_self(), name.c_str());
      RunInstance();
    });
  }
}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Enqueue(std::unique_ptr<InferRequest> request) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      queue_.push_back(std::move(request));
      return;
    }
  }
  request->on_complete(InferResponse{
      absl::UnavailableError(StrCat("model '", model_label_, "' is shutting down")), {}});
}

void Scheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& instance : instances_) {
    if (instance.joinable()) instance.join();
  }
}

size_t Scheduler::queue_depth() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void Scheduler::RunInstance() {
  for (;;) {
    std::unique_ptr<InferRequest> request;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Scheduler* s)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) { return s->stopping_ || !s->queue_.empty(); },
          this));
      // Stopping still drains the queue: every accepted request gets its answer.
      if (queue_.empty()) return;
      request = std::move(queue_.front());
      queue_.pop_front();
    }
    Execute(*request);
  }
}

void Scheduler::Execute(InferRequest& request) {
  std::vector<Tensor> inputs;
  inputs.reserve(request.inputs.size());
  for (const NamedTensor& input : request.inputs) inputs.push_back(input.tensor);

  absl::StatusOr<std::vector<Tensor>> outputs = model_->Execute(inputs);
  // The inputs may be views over the request body; release them before answering.
  inputs.clear();
  request.inputs.clear();

  InferResponse response;
  if (!outputs.ok()) {
    response.status = outputs.status();
  } else if (outputs->size() != config_->outputs.size()) {
    // Backends promise one tensor per config output; a broken promise must not crash here.
    response.status =
        absl::InternalError(StrCat("model '", model_label_, "' returned ", outputs->size(),
                                   " outputs, config declares ", config_->outputs.size()));
  } else if (request.requested_outputs.empty()) {
    for (size_t i = 0; i < config_->outputs.size(); ++i) {
      response.outputs.push_back({config_->outputs[i].name, std::move((*outputs)[i])});
    }
  } else {
    for (const std::string& name : request.requested_outputs) {
      for (size_t i = 0; i < config_->outputs.size(); ++i) {
        if (config_->outputs[i].name == name) response.outputs.push_back({name, (*outputs)[i]});
      }
    }
  }
  request.on_complete(std::move(response));
}

}  // namespace inferd
