// An optional capability of a Backend: completing a model's config from its model file
// (Triton's auto-complete), so that a folder with only a model file serves.
//
// A separate interface rather than a virtual of Backend: only the loader asks for it
// (model_loader.cc, through dynamic_cast), and a backend that cannot read a signature
// from its files simply does not implement it.
#ifndef INFERD_CORE_BACKEND_CONFIG_COMPLETER_H_
#define INFERD_CORE_BACKEND_CONFIG_COMPLETER_H_

#include <filesystem>

#include "absl/status/statusor.h"
#include "core/config/model_config.h"

namespace inferd {

class ConfigCompleter {
 public:
  virtual ~ConfigCompleter() = default;

  // `config` with what config.yaml left out (its inputs or outputs are empty) filled in
  // from the model file in `version_dir`: inputs, outputs, datatypes, dims and, when
  // max_batch_size is 0, a batch axis. Called before Load; the result is what Load, the
  // scheduler and the metadata then use. Errors name config.yaml and what to add.
  virtual absl::StatusOr<ModelConfig> CompleteConfig(const ModelConfig& config,
                                                     const std::filesystem::path& version_dir) = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_BACKEND_CONFIG_COMPLETER_H_
