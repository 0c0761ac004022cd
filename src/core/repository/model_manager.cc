#include "core/repository/model_manager.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "core/repository/model_loader.h"
#include "core/repository/version_dirs.h"

namespace inferd {
namespace {

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(StrCat(path.string(), ": cannot be read (missing?)"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kReady:
      return "READY";
    case ModelState::kUnavailable:
      return "UNAVAILABLE";
  }
  return "UNKNOWN";
}

ModelManager::ModelManager(std::filesystem::path repository,
                           std::vector<std::unique_ptr<Backend>> backends, ConfigDefaults defaults,
                           ModelObserverFactory* observers)
    : repository_(std::move(repository)),
      backends_(std::move(backends)),
      defaults_(defaults),
      observers_(observers),
      serving_(std::make_shared<const ServingMap>()) {}

ModelManager::~ModelManager() { StopAll(); }

Backend* ModelManager::FindBackend(std::string_view name) const {
  for (const auto& backend : backends_) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

absl::Status ModelManager::LoadAll() {
  std::error_code ec;
  if (!std::filesystem::is_directory(repository_, ec)) {
    return absl::NotFoundError(
        StrCat("model repository '", repository_.string(), "' is not a readable folder"));
  }
  std::vector<std::filesystem::path> model_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(repository_, ec)) {
    const std::string name = entry.path().filename().string();
    // Hidden folders (.git, editor state) are not models.
    if (entry.is_directory(ec) && !name.starts_with(".")) model_dirs.push_back(entry.path());
  }
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot list model repository '", repository_.string(), "': ", ec.message()));
  }
  std::sort(model_dirs.begin(), model_dirs.end());

  // All configs first: backends size process-wide resources (thread pools) to every model
  // before the first one loads.
  std::vector<ParsedModel> parsed;
  for (const auto& model_dir : model_dirs) parsed.push_back(ParseModel(model_dir));
  for (const auto& backend : backends_) {
    std::vector<const ModelConfig*> configs;
    for (const ParsedModel& model : parsed) {
      if (model.config.ok() && model.config->backend == backend->name()) {
        configs.push_back(&*model.config);
      }
    }
    backend->Prepare(configs);
  }

  auto serving = std::make_shared<ServingMap>();
  std::vector<ModelStatus> index;
  for (ParsedModel& model : parsed) {
    ModelHandle served;
    const TimePoint load_start = Clock::now();
    ModelStatus status = LoadModel(std::move(model), &served);
    if (observers_ != nullptr) {
      observers_->OnModelLoadFinished(status.name, status.version, Clock::now() - load_start,
                                      status.state == ModelState::kReady
                                          ? absl::OkStatus()
                                          : absl::UnavailableError(status.reason));
    }
    if (served) (*serving)[status.name][served->version()] = std::move(served);
    index.push_back(std::move(status));
  }
  absl::MutexLock lock(&mu_);
  serving_ = std::move(serving);
  index_ = std::move(index);
  return absl::OkStatus();
}

ModelManager::ParsedModel ModelManager::ParseModel(const std::filesystem::path& model_dir) const {
  const std::filesystem::path config_path = model_dir / "config.yaml";
  absl::StatusOr<std::string> text = ReadFile(config_path);
  if (!text.ok()) return {model_dir, text.status()};
  return {model_dir,
          ParseModelConfig(*text, model_dir.filename().string(), config_path.string(), defaults_)};
}

ModelStatus ModelManager::LoadModel(ParsedModel parsed, ModelHandle* served) {
  const std::filesystem::path& model_dir = parsed.dir;
  ModelStatus status;
  status.name = model_dir.filename().string();
  auto fail = [&](const absl::Status& why) {
    status.state = ModelState::kUnavailable;
    status.reason = std::string(why.message());
    spdlog::error("model {}: UNAVAILABLE: {}", status.name, status.reason);
    return status;
  };

  const std::filesystem::path config_path = model_dir / "config.yaml";
  absl::StatusOr<ModelConfig>& config = parsed.config;
  if (!config.ok()) return fail(config.status());

  Backend* backend = FindBackend(config->backend);
  if (backend == nullptr) {
    std::vector<std::string_view> known;
    for (const auto& b : backends_) known.push_back(b->name());
    return fail(absl::InvalidArgumentError(
        StrCat(config_path.string(), ": backend: '", config->backend,
               "' is not available in this build (available: ", StrJoin(known, ", "), ")")));
  }

  VersionDirScan scan = ScanVersionDirs(model_dir);
  for (const std::string& ignored : scan.ignored) {
    spdlog::warn(
        "model {}: ignoring folder '{}': version folders are named by a non-negative "
        "integer without leading zeros",
        status.name, ignored);
  }
  if (scan.versions.empty()) {
    return fail(
        absl::NotFoundError(StrCat(model_dir.string(), ": no version folder (for example ",
                                   (model_dir / "1" / backend->model_filename()).string(), ")")));
  }
  status.version = scan.versions.back();
  spdlog::info("model {}: loading version {} ({})", status.name, *status.version, config->backend);
  auto shared_config = std::make_shared<const ModelConfig>(*std::move(config));
  absl::StatusOr<std::unique_ptr<ServedModel>> loaded = LoadModelVersion(
      *backend, shared_config, model_dir, *status.version,
      observers_ != nullptr ? observers_->ForModel(status.name, *status.version) : nullptr);
  if (!loaded.ok()) return fail(loaded.status());
  *served = std::move(*loaded);
  status.state = ModelState::kReady;
  spdlog::info("model {}: version {} READY", status.name, *status.version);
  return status;
}

absl::StatusOr<ModelHandle> ModelManager::Acquire(std::string_view name,
                                                  std::optional<int64_t> version) const {
  std::shared_ptr<const ServingMap> serving;
  {
    absl::MutexLock lock(&mu_);
    serving = serving_;
    auto found = serving->find(name);
    if (found == serving->end()) {
      for (const ModelStatus& status : index_) {
        if (status.name == name) {
          return absl::UnavailableError(
              StrCat("model '", name, "' is unavailable: ", status.reason));
        }
      }
      return absl::NotFoundError(StrCat("unknown model '", name, "'"));
    }
  }
  const auto& versions = serving->find(name)->second;
  if (!version) return versions.rbegin()->second;
  auto it = versions.find(*version);
  if (it == versions.end()) {
    std::vector<int64_t> served;
    for (const auto& [v, handle] : versions) served.push_back(v);
    return absl::NotFoundError(StrCat("model '", name, "' has no version ", *version,
                                      " (served: ", StrJoin(served, ", "), ")"));
  }
  return it->second;
}

std::vector<ModelStatus> ModelManager::Index() const {
  absl::MutexLock lock(&mu_);
  return index_;
}

std::vector<ModelHandle> ModelManager::ReadyModels() const {
  absl::MutexLock lock(&mu_);
  std::vector<ModelHandle> models;
  for (const auto& [name, versions] : *serving_) {
    for (const auto& [version, handle] : versions) models.push_back(handle);
  }
  return models;
}

std::vector<std::string> ModelManager::ReadyModelNames() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, versions] : *serving_) names.push_back(name);
  return names;
}

void ModelManager::StopAll() {
  std::shared_ptr<const ServingMap> serving;
  {
    absl::MutexLock lock(&mu_);
    serving = serving_;
  }
  for (const auto& [name, versions] : *serving) {
    for (const auto& [version, handle] : versions) handle->Stop();
  }
}

}  // namespace inferd
