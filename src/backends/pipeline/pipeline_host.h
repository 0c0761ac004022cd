// What a pipeline needs from the server beyond its own folder: the repository's configs (to
// check model steps at load) and the door model steps take (InferencePath, a StepRunner).
// Both are built after the backends (ModelManager takes the backends; InferencePath takes
// the ModelManager), so main binds them late: Bind before LoadAll, Unbind before the
// InferencePath goes away. Unbound, loads fail and model steps answer Unavailable.
//
// Thread-safety: thread-safe. Run holds a reader lock while it hands the request over (which
// never waits on a model), so Unbind returns only once no call is inside the runner.
#ifndef INFERD_BACKENDS_PIPELINE_PIPELINE_HOST_H_
#define INFERD_BACKENDS_PIPELINE_PIPELINE_HOST_H_

#include <memory>
#include <optional>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/config/model_config.h"
#include "core/pipeline/step_runner.h"

namespace inferd {

class ModelManager;  // core/repository/model_manager.h

// The repository's configs, as a load-time check reads them (a seam for tests).
class ConfigLookup {
 public:
  virtual ~ConfigLookup() = default;
  // NotFound: no such model; Unavailable: its config is unusable.
  virtual absl::StatusOr<std::shared_ptr<const ModelConfig>> ConfigOf(
      std::string_view name) const = 0;
};

class PipelineHost : public StepRunner, public ConfigLookup {
 public:
  void Bind(const ModelManager* models, StepRunner* runner);
  // For tests: any config source.
  void Bind(const ConfigLookup* configs, StepRunner* runner);
  void Unbind();

  absl::StatusOr<std::shared_ptr<const ModelConfig>> ConfigOf(std::string_view name) const override;
  void Run(std::string_view model, std::optional<int64_t> version,
           std::unique_ptr<InferRequest> request, InferCallbacks callbacks) override;

 private:
  mutable absl::Mutex mu_;
  const ModelManager* models_ ABSL_GUARDED_BY(mu_) = nullptr;
  const ConfigLookup* configs_ ABSL_GUARDED_BY(mu_) = nullptr;
  StepRunner* runner_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_PIPELINE_PIPELINE_HOST_H_
