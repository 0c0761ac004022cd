// The source of a model's versions: what one folder of the model repository holds, read
// from the file system — its config.yaml (or one generated from its model file), the config
// parsed from it and its version folders (TF Serving's "Source" of servable versions).
//
// Thread-safety: free functions without state of their own; they only read the file
// system, so the model manager calls them without its lock (a slow disk or a FIFO named
// config.yaml stalls no request).
#ifndef INFERD_CORE_REPOSITORY_MODEL_FOLDER_H_
#define INFERD_CORE_REPOSITORY_MODEL_FOLDER_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/backend/backend.h"
#include "core/config/model_config.h"

namespace inferd {

// What a model's folder holds.
struct ModelFolder {
  absl::StatusOr<std::string> text;  // config.yaml, or one generated from the model file
  absl::StatusOr<ModelConfig> config = absl::UnknownError("not read");  // parsed from `text`
  Backend* backend = nullptr;     // the config's backend (config is an error without one)
  std::vector<int64_t> versions;  // the version folders (kWatch: the settled ones)
};

// The model folders of `repository`, sorted by name. Hidden folders (.git, editor state, a
// copy in progress) and folders whose name no client could send are skipped. NotFound when
// the repository is not a folder, Unavailable when it cannot be listed.
absl::StatusOr<std::vector<std::string>> ListModelFolders(const std::filesystem::path& repository);

// Reads `repository`/`name`. `stable` (kWatch) replaces the scan of version folders with the
// versions whose files have settled. `backends` are the engines this build has.
ModelFolder ReadModelFolder(const std::filesystem::path& repository, const std::string& name,
                            const std::vector<int64_t>* stable,
                            std::span<const std::unique_ptr<Backend>> backends,
                            const ConfigDefaults& defaults);

// The backend called `name`, or null.
Backend* FindBackend(std::span<const std::unique_ptr<Backend>> backends, std::string_view name);

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_MODEL_FOLDER_H_
