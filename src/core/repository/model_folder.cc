#include "core/repository/model_folder.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "core/config/model_name.h"
#include "core/config/version_dirs.h"

namespace inferd {

namespace {

absl::StatusOr<std::string> ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path.string(), ": cannot be read (missing?)"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "backend: NAME" for a folder without config.yaml whose newest version folder holds the
// model file of exactly one backend; nullopt otherwise.
std::optional<std::string> ConfigFromModelFile(std::span<const std::unique_ptr<Backend>> backends,
                                               const std::filesystem::path& dir) {
  const std::vector<int64_t> versions = ScanVersionDirs(dir).versions;
  if (versions.empty()) return std::nullopt;
  const std::filesystem::path newest = dir / std::to_string(versions.back());
  std::optional<std::string> found;
  for (const auto& backend : backends) {
    if (!backend->has_model_file()) continue;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(newest / backend->model_filename(), ec)) continue;
    if (found) return std::nullopt;  // two engines' files: config.yaml must say which
    found = StrCat("backend: ", backend->name(), "\n");
  }
  return found;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListModelFolders(const std::filesystem::path& repository) {
  std::error_code ec;
  if (!std::filesystem::is_directory(repository, ec)) {
    return absl::NotFoundError(
        StrCat("model repository '", repository.string(), "' is not a readable folder"));
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(repository, ec)) {
    const std::string name = entry.path().filename().string();
    // Hidden folders (.git, editor state, a copy in progress) are not models, nor are
    // folders whose name no client could send.
    if (!entry.is_directory(ec) || name.starts_with(".")) continue;
    if (absl::Status valid = ValidateModelName(name); !valid.ok()) {
      spdlog::warn("repository: skipping folder: {}", std::string(valid.message()));
      continue;
    }
    names.push_back(name);
  }
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot list model repository '", repository.string(), "': ", ec.message()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Backend* FindBackend(std::span<const std::unique_ptr<Backend>> backends, std::string_view name) {
  for (const auto& backend : backends) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

ModelFolder ReadModelFolder(const std::filesystem::path& repository, const std::string& name,
                            const std::vector<int64_t>* stable,
                            std::span<const std::unique_ptr<Backend>> backends,
                            const ConfigDefaults& defaults) {
  ModelFolder folder;
  const std::filesystem::path dir = repository / name;
  const std::filesystem::path config_path = dir / "config.yaml";
  folder.text = ReadText(config_path);
  std::error_code ec;
  if (!folder.text.ok() && !std::filesystem::exists(config_path, ec)) {
    // Like Triton: a folder with only a model file serves, its signature read from the file.
    if (std::optional<std::string> generated = ConfigFromModelFile(backends, dir)) {
      folder.text = *generated;
    }
  }
  folder.config = folder.text.ok()
                      ? ParseModelConfig(*folder.text, name, config_path.string(), defaults)
                      : absl::StatusOr<ModelConfig>(folder.text.status());
  if (folder.config.ok()) {
    folder.backend = FindBackend(backends, folder.config->backend);
    if (folder.backend == nullptr) {
      std::vector<std::string_view> known;
      for (const auto& b : backends) known.push_back(b->name());
      folder.config = absl::InvalidArgumentError(
          StrCat(config_path.string(), ": backend: '", folder.config->backend,
                 "' is not available in this build (available: ", StrJoin(known, ", "), ")"));
    }
  }
  if (stable != nullptr) {
    folder.versions = *stable;
  } else {
    VersionDirScan scan = ScanVersionDirs(dir);
    for (const std::string& ignored : scan.ignored) {
      spdlog::warn(
          "model {}: ignoring folder '{}': version folders are named by a non-negative "
          "integer without leading zeros",
          name, ignored);
    }
    folder.versions = std::move(scan.versions);
  }
  return folder;
}

}  // namespace inferd
