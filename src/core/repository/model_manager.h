// Owns every model of a repository: scans it, loads what it finds, and hands out handles.
//
// Each model folder is loaded independently: a bad config, a missing or corrupt model file,
// or a model that disagrees with its config makes that model UNAVAILABLE with a reason and
// never stops the others. The map of served models is an immutable snapshot replaced under
// a mutex, so lookups on the request path take the lock only to copy one shared_ptr.
//
// Version policy for now: the highest version folder is served (the later `version_policy`
// setting generalises this).
//
// Thread-safety: all public methods are thread-safe.
#ifndef INFERD_CORE_REPOSITORY_MODEL_MANAGER_H_
#define INFERD_CORE_REPOSITORY_MODEL_MANAGER_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/backend.h"
#include "core/model_observer.h"
#include "core/served_model.h"

namespace inferd {

enum class ModelState { kLoading, kReady, kUnavailable };
std::string_view ModelStateName(ModelState state);

// One row of the repository index.
struct ModelStatus {
  std::string name;
  std::optional<int64_t> version;  // absent when no version could be determined
  ModelState state = ModelState::kLoading;
  std::string reason;  // why the model is unavailable; empty when ready
};

class ModelManager {
 public:
  // `backends` are the engines this build has, looked up by config.yaml's `backend`.
  // `observers` (optional, must outlive the manager) is told about every load, for metrics.
  ModelManager(std::filesystem::path repository, std::vector<std::unique_ptr<Backend>> backends,
               ConfigDefaults defaults = {}, ModelObserverFactory* observers = nullptr);
  ~ModelManager();

  // Scans the repository and loads every model in it. Fails only when the repository
  // itself cannot be read; per-model failures are recorded in Index().
  absl::Status LoadAll();

  // A handle on a ready version; the highest ready one when `version` is absent.
  // NotFound: no such model or version. Unavailable: the model exists but failed to load.
  absl::StatusOr<ModelHandle> Acquire(std::string_view name,
                                      std::optional<int64_t> version = std::nullopt) const;

  // Every model found in the repository with its state, sorted by name.
  std::vector<ModelStatus> Index() const;

  // Every ready version, sorted by name then version.
  std::vector<ModelHandle> ReadyModels() const;

  // Names of the models that have a ready version, sorted.
  std::vector<std::string> ReadyModelNames() const;

  // Stops every model's scheduler after its queued requests are finished.
  void StopAll();

 private:
  using ServingMap = std::map<std::string, std::map<int64_t, ModelHandle>, std::less<>>;

  // A model folder whose config.yaml has been read: the config, or why it is unusable.
  struct ParsedModel {
    std::filesystem::path dir;
    absl::StatusOr<ModelConfig> config;
  };
  ParsedModel ParseModel(const std::filesystem::path& model_dir) const;
  // Loads one parsed model; returns its status row and, when ready, the served version.
  ModelStatus LoadModel(ParsedModel parsed, ModelHandle* served);
  Backend* FindBackend(std::string_view name) const;

  const std::filesystem::path repository_;
  const std::vector<std::unique_ptr<Backend>> backends_;
  const ConfigDefaults defaults_;
  ModelObserverFactory* const observers_;

  mutable absl::Mutex mu_;
  std::shared_ptr<const ServingMap> serving_ ABSL_GUARDED_BY(mu_);
  std::vector<ModelStatus> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_MODEL_MANAGER_H_
