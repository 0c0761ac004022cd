// Turns one version folder into a ready ServedModel: engine load, then a warm-up run whose
// outputs are checked against config.yaml, so a config that does not describe the model
// fails at load time with a clear reason instead of failing every request later.
#ifndef INFERD_CORE_REPOSITORY_MODEL_LOADER_H_
#define INFERD_CORE_REPOSITORY_MODEL_LOADER_H_

#include <cstdint>
#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "core/backend/backend.h"
#include "core/config/model_config.h"
#include "core/model/served_model.h"

namespace inferd {

// `shared_weights`: an already loaded engine model of an identical file, reused instead of
// loading the file again (weight sharing); nullptr loads it.
absl::StatusOr<std::unique_ptr<ServedModel>> LoadModelVersion(
    Backend& backend, std::shared_ptr<const ModelConfig> config,
    const std::filesystem::path& model_dir, int64_t version,
    std::shared_ptr<BackendModel> shared_weights = nullptr,
    std::shared_ptr<ModelObserver> observer = nullptr);

// Runs `model` once on zero inputs (batch 1, variable dimensions 1) and checks that the
// outputs match the config's count, datatypes and shapes.
absl::Status WarmUpAndCheckOutputs(const ModelConfig& config, BackendModel& model);

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_MODEL_LOADER_H_
