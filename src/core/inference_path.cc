#include "core/inference_path.h"

#include <algorithm>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/scheduling/batch_tuner.h"

namespace inferd {

InferencePath::InferencePath(ModelManager* models, std::string default_model)
    : models_(models), default_model_(std::move(default_model)) {}

absl::StatusOr<std::shared_ptr<const ModelConfig>> InferencePath::ConfigFor(
    std::string_view name) const {
  return models_->ConfigOf(name);
}

absl::StatusOr<std::string> InferencePath::DefaultModel() const {
  if (!default_model_.empty()) return default_model_;
  // Servable models: loaded, or loadable on demand (lazy, evicted).
  std::vector<std::string> servable;
  for (const ModelStatus& status : models_->Index()) {
    if (status.state == ModelState::kUnavailable) continue;
    if (servable.empty() || servable.back() != status.name) servable.push_back(status.name);
  }
  if (servable.size() == 1) return servable.front();
  return absl::InvalidArgumentError(
      StrCat("no default model (ready models: ", StrJoin(servable, ", "), ")"));
}

void InferencePath::Submit(std::string_view name, std::optional<int64_t> version,
                           std::unique_ptr<InferRequest> request, InferCallbacks callbacks) {
  const int64_t timeout_us = request->timeout_us;
  // std::function needs a copyable callable: the request travels in a shared_ptr.
  auto pending = std::make_shared<std::unique_ptr<InferRequest>>(std::move(request));
  models_->AcquireForInference(
      name, version, timeout_us,
      [pending, callbacks = std::move(callbacks)](absl::StatusOr<ModelHandle> model) mutable {
        if (!model.ok()) return callbacks.done(nullptr, InferResponse{model.status(), {}, 0});
        if (callbacks.acquired) callbacks.acquired(*model);
        // The completion holds a plain pointer, not the handle: the last handle must never be
        // released on the model's own execution thread. The version stays alive while it
        // runs: ~ServedModel answers every queued request first.
        ServedModel* served = model->get();
        (*pending)->on_complete = [served,
                                   done = std::move(callbacks.done)](InferResponse response) {
          done(served, std::move(response));
        };
        served->Infer(std::move(*pending));
      });
}

absl::StatusOr<ModelDescription> InferencePath::Describe(std::string_view name,
                                                         std::optional<int64_t> version) const {
  ASSIGN_OR_RETURN(ModelManager::Description model, models_->Describe(name));
  const std::vector<int64_t>& served = model.served_versions;
  if (version && !std::binary_search(served.begin(), served.end(), *version)) {
    return absl::NotFoundError(StrCat("model '", name, "' has no version ", *version,
                                      " (served: ", StrJoin(served, ", "), ")"));
  }
  ModelDescription description{model.config, std::move(model.platform), served,
                               std::move(model.ready_versions), PolicyFromConfig(*model.config)};
  if (absl::StatusOr<ModelHandle> loaded = models_->Acquire(name, version); loaded.ok()) {
    description.batch_policy = (*loaded)->batch_policy();
  }
  return description;
}

}  // namespace inferd
