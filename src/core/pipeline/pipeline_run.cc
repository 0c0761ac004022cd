#include "core/pipeline/pipeline_run.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "core/model/served_model.h"

namespace inferd {
namespace {

class PipelineRun : public std::enable_shared_from_this<PipelineRun> {
 public:
  PipelineRun(std::shared_ptr<const CompiledPipeline> pipeline, StepRunner* runner,
              AsyncExecution execution, AsyncDone done)
      : pipeline_(std::move(pipeline)),
        runner_(runner),
        execution_(std::move(execution)),
        done_(std::move(done)),
        scope_(pipeline_->slot_count),
        waiting_for_(pipeline_->steps.size()),
        steps_left_(pipeline_->steps.size()) {
    for (size_t s = 0; s < pipeline_->steps.size(); ++s) {
      waiting_for_[s] = pipeline_->steps[s].dependencies;
    }
  }

  void Start() {
    const std::vector<Tensor>& inputs = execution_.inputs;
    if (inputs.size() != pipeline_->input_slots.size()) {
      return Fail(absl::InternalError(StrCat("pipeline '", pipeline_->name, "' got ", inputs.size(),
                                             " inputs, expected ", pipeline_->input_slots.size())));
    }
    std::vector<size_t> ready;
    {
      // No completion can arrive before the first submission below, so the lock is never
      // contended here; it is taken so the guarded state is only ever touched under it.
      MutexLock lock(&mu_);
      for (size_t i = 0; i < inputs.size(); ++i) {
        scope_[pipeline_->input_slots[i]] =
            pipeline_->batched ? inputs[i] : WithBatchDim(inputs[i]);
      }
      for (size_t s = 0; s < pipeline_->steps.size(); ++s) {
        if (waiting_for_[s] == 0) ready.push_back(s);
      }
    }
    execution_.inputs.clear();
    Advance(std::move(ready));
  }

 private:
  // Runs the ready op steps (and the ops they make ready) here, then submits every ready
  // model step: independent model steps are all in flight before any answers.
  void Advance(std::vector<size_t> ready) {
    std::vector<size_t> models;
    // In order: steps are compiled producers first, so model steps go out in config order.
    for (size_t next = 0; next < ready.size(); ++next) {
      const size_t s = ready[next];
      const CompiledStep& step = pipeline_->steps[s];
      if (step.op == nullptr) {
        models.push_back(s);
        continue;
      }
      absl::StatusOr<std::vector<Tensor>> outputs = RunOp(step);
      if (!outputs.ok()) return Fail(outputs.status());
      std::vector<Tensor> mapped;
      mapped.reserve(step.output_ports.size());
      for (size_t index : step.op_output_index) mapped.push_back((*outputs)[index]);
      if (!Store(s, std::move(mapped), &ready)) return;
    }
    for (size_t s : models) SubmitModelStep(s);
  }

  absl::StatusOr<std::vector<Tensor>> RunOp(const CompiledStep& step) {
    std::vector<Tensor> inputs;
    inputs.reserve(step.input_slots.size());
    {
      MutexLock lock(&mu_);
      if (finished_) return absl::CancelledError("pipeline already answered");
      for (size_t slot : step.input_slots) inputs.push_back(scope_[slot]);
    }
    absl::StatusOr<std::vector<Tensor>> outputs = step.op->Run(inputs);
    if (!outputs.ok()) {
      // A row the op cannot take is the client's (400); anything else is the server's.
      return absl::Status(outputs.status().code(),
                          StrCat("pipeline '", pipeline_->name, "' step '", step.name,
                                 "': ", outputs.status().message()));
    }
    if (outputs->size() != step.op->outputs().size()) {
      return absl::InternalError(StrCat("pipeline '", pipeline_->name, "' step '", step.name,
                                        "': the op returned ", outputs->size(),
                                        " outputs, it declares ", step.op->outputs().size()));
    }
    return outputs;
  }

  // Stores step `s`'s outputs and queues the steps that were waiting only for it; finishes
  // the run after the last step. False when the run is over (answered already, or now).
  bool Store(size_t s, std::vector<Tensor> outputs, std::vector<size_t>* ready) {
    const CompiledStep& step = pipeline_->steps[s];
    std::vector<Tensor> answer;
    {
      MutexLock lock(&mu_);
      if (finished_) return false;
      for (size_t i = 0; i < outputs.size(); ++i) {
        scope_[step.output_slots[i]] = std::move(outputs[i]);
      }
      for (size_t consumer : step.consumers) {
        if (--waiting_for_[consumer] == 0) ready->push_back(consumer);
      }
      if (--steps_left_ > 0) return true;
      finished_ = true;
      answer.reserve(pipeline_->output_slots.size());
      for (size_t slot : pipeline_->output_slots) {
        answer.push_back(pipeline_->batched ? scope_[slot] : WithoutBatchDim(scope_[slot]));
      }
      // Release every intermediate before answering: the request's tensors may be views
      // over its body, which the answer lets go.
      scope_.clear();
    }
    done_(std::move(answer));
    return false;
  }

  void Fail(absl::Status status) {
    {
      MutexLock lock(&mu_);
      if (finished_) return;  // the first error wins
      finished_ = true;
      scope_.clear();
    }
    done_(std::move(status));
  }

  void SubmitModelStep(size_t s) {
    const CompiledStep& step = pipeline_->steps[s];
    auto request = std::make_unique<InferRequest>();
    request->id = execution_.id.empty() ? step.name : StrCat(execution_.id, "/", step.name);
    request->priority = execution_.priority;
    request->tenant = execution_.tenant;
    request->cancelled = execution_.cancelled;
    if (execution_.cancelled && execution_.cancelled->load()) {
      return Fail(absl::CancelledError("the client went away"));
    }
    if (execution_.deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
          *execution_.deadline - execution_.time->Now());
      if (left.count() <= 0) {
        return Fail(absl::DeadlineExceededError(StrCat(
            "pipeline '", pipeline_->name, "' passed its deadline before step '", step.name, "'")));
      }
      request->timeout_us = std::min<int64_t>(std::max<int64_t>(1, left.count()), kMaxTimeoutUs);
    }
    {
      MutexLock lock(&mu_);
      if (finished_) return;
      for (size_t i = 0; i < step.input_slots.size(); ++i) {
        const Tensor& tensor = scope_[step.input_slots[i]];
        request->inputs.push_back(
            {step.input_ports[i], step.model_unbatched ? WithoutBatchDim(tensor) : tensor});
      }
    }
    request->requested_outputs = step.output_ports;
    InferCallbacks callbacks;
    const TimePoint submitted = Clock::now();
    callbacks.done = [self = shared_from_this(), s, submitted](const ServedModel* model,
                                                               InferResponse response) {
      if (model != nullptr && model->observer() != nullptr) {
        model->observer()->OnRequestFinished(response.status.code(), Clock::now() - submitted);
      }
      self->ModelStepDone(s, std::move(response));
    };
    runner_->Run(step.model, step.version, std::move(request), std::move(callbacks));
  }

  void ModelStepDone(size_t s, InferResponse response) {
    const CompiledStep& step = pipeline_->steps[s];
    const std::string where =
        StrCat("pipeline '", pipeline_->name, "' step '", step.name, "' (model ", step.model, ")");
    if (!response.status.ok()) {
      const absl::Status& status = response.status;
      // The pipeline built these inputs: a step model refusing them is a config fault, not
      // the client's. Overload, unavailability and deadlines keep their codes (retry, 503).
      if (status.code() == absl::StatusCode::kInvalidArgument) {
        return Fail(absl::InternalError(StrCat(where, " refused its inputs: ", status.message())));
      }
      return Fail(absl::Status(status.code(), StrCat(where, ": ", status.message())));
    }
    std::vector<Tensor> outputs;
    outputs.reserve(step.output_ports.size());
    for (const std::string& port : step.output_ports) {
      auto it = std::find_if(response.outputs.begin(), response.outputs.end(),
                             [&](const NamedTensor& output) { return output.name == port; });
      if (it == response.outputs.end()) {
        return Fail(absl::InternalError(StrCat(where, " did not return output '", port, "'")));
      }
      outputs.push_back(step.model_unbatched ? WithBatchDim(it->tensor) : it->tensor);
    }
    response.outputs.clear();
    std::vector<size_t> ready;
    if (!Store(s, std::move(outputs), &ready)) return;
    Advance(std::move(ready));
  }

  const std::shared_ptr<const CompiledPipeline> pipeline_;
  StepRunner* const runner_;
  AsyncExecution execution_;
  const AsyncDone done_;

  Mutex mu_;
  std::vector<Tensor> scope_ ABSL_GUARDED_BY(mu_);
  std::vector<size_t> waiting_for_ ABSL_GUARDED_BY(mu_);
  size_t steps_left_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

Tensor Reshaped(const Tensor& tensor, Shape shape) {
  // The consumer only reads: the view shares the bytes and their owner.
  return Tensor::Wrap(tensor.type(), std::move(shape), const_cast<std::byte*>(tensor.data()),
                      tensor.byte_size(), tensor.owner());
}

}  // namespace

Tensor WithBatchDim(const Tensor& tensor) {
  Shape shape = tensor.shape();
  shape.insert(shape.begin(), 1);
  return Reshaped(tensor, std::move(shape));
}

Tensor WithoutBatchDim(const Tensor& tensor) {
  if (tensor.shape().empty() || tensor.shape().front() != 1) return tensor;
  return Reshaped(tensor, Shape(tensor.shape().begin() + 1, tensor.shape().end()));
}

void StartPipelineRun(std::shared_ptr<const CompiledPipeline> pipeline, StepRunner* runner,
                      AsyncExecution execution, AsyncDone done) {
  auto run = std::make_shared<PipelineRun>(std::move(pipeline), runner, std::move(execution),
                                           std::move(done));
  run->Start();
}

}  // namespace inferd
