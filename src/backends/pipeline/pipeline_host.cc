#include "backends/pipeline/pipeline_host.h"

#include <utility>

#include "common/strings.h"
#include "core/repository/model_manager.h"

namespace inferd {

void PipelineHost::Bind(const ModelManager* models, StepRunner* runner) {
  absl::WriterMutexLock lock(&mu_);
  models_ = models;
  configs_ = nullptr;
  runner_ = runner;
}

void PipelineHost::Bind(const ConfigLookup* configs, StepRunner* runner) {
  absl::WriterMutexLock lock(&mu_);
  models_ = nullptr;
  configs_ = configs;
  runner_ = runner;
}

void PipelineHost::Unbind() {
  absl::WriterMutexLock lock(&mu_);
  models_ = nullptr;
  configs_ = nullptr;
  runner_ = nullptr;
}

absl::StatusOr<std::shared_ptr<const ModelConfig>> PipelineHost::ConfigOf(
    std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  if (models_ != nullptr) return models_->ConfigOf(name);
  if (configs_ != nullptr) return configs_->ConfigOf(name);
  return absl::UnavailableError("pipelines are not bound to a model repository");
}

namespace {
// Calls into the runner this thread is inside of: a step refused at once (on the calling
// thread) can make the pipeline submit its next step from within the outer call, and a
// reader lock taken twice by one thread can deadlock behind a waiting writer.
thread_local int runs_on_this_thread = 0;
}  // namespace

void PipelineHost::Run(std::string_view model, std::optional<int64_t> version,
                       std::unique_ptr<InferRequest> request,
                       InferCallbacks callbacks) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (runs_on_this_thread > 0) {
    // The outer call holds the reader lock for this thread.
    runner_->Run(model, version, std::move(request), std::move(callbacks));
    return;
  }
  {
    absl::ReaderMutexLock lock(&mu_);
    if (runner_ != nullptr) {
      ++runs_on_this_thread;
      runner_->Run(model, version, std::move(request), std::move(callbacks));
      --runs_on_this_thread;
      return;
    }
  }
  callbacks.done(nullptr, InferResponse{absl::UnavailableError(StrCat(
                                            "model '", model, "': the server is shutting down")),
                                        {},
                                        0});
}

}  // namespace inferd
