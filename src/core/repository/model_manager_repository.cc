// The model manager's repository side: the scan at start-up, the repository API (Load,
// Unload) and kWatch's changes, each of which reads a model folder (model_folder.h) without
// mu_, applies it under mu_ and queues the loads it asks for (model_manager_loader.cc).
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "core/config/model_name.h"
#include "core/config/version_policy.h"
#include "core/repository/model_manager.h"
#include "core/repository/repository_watcher.h"

namespace inferd {

absl::Status ModelManager::LoadAll() {
  absl::StatusOr<std::vector<std::string>> listed = ListModelFolders(repository_);
  if (!listed.ok()) return listed.status();
  const std::vector<std::string>& names = *listed;
  for (const std::string& wanted : options_.load_models) {
    if (!std::binary_search(names.begin(), names.end(), wanted)) {
      return absl::NotFoundError(StrCat("--load-model ", wanted, ": no folder '", wanted,
                                        "' in the model repository ", repository_.string()));
    }
  }

  // All configs first: backends size process-wide resources (thread pools) to every model
  // before the first one loads.
  {
    MutexLock folder_lock(&folders_mu_);
    std::vector<ModelFolder> folders;
    for (const std::string& name : names) {
      folders.push_back(ReadModelFolder(repository_, name, nullptr, backends_, options_.defaults));
    }
    MutexLock lock(&mu_);
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& name = names[i];
      ModelEntry& entry = models_[name];
      entry.dir = repository_ / name;
      entry.requested = options_.control != ModelControl::kExplicit ||
                        std::find(options_.load_models.begin(), options_.load_models.end(), name) !=
                            options_.load_models.end();
      ApplyModelFolder(name, entry, std::move(folders[i]));
    }
    for (const auto& backend : backends_) {
      std::vector<const ModelConfig*> configs;
      for (const auto& [name, entry] : models_) {
        if (entry.config && entry.backend == backend.get()) configs.push_back(entry.config.get());
      }
      backend->Prepare(configs);
    }
    scanned_ = true;
    PublishSnapshot();
  }

  Mutex done_mu;
  CondVar done_cv;
  size_t pending = names.size();
  for (const std::string& name : names) {
    Reconcile(name, /*force=*/false, nullptr, [&](const absl::Status&) {
      MutexLock lock(&done_mu);
      --pending;
      done_cv.NotifyAll();
    });
  }
  {
    MutexLock lock(&done_mu);
    done_cv.Wait(&done_mu, [&] { return pending == 0; });
  }
  if (options_.control == ModelControl::kWatch) {
    watcher_ = std::make_unique<RepositoryWatcher>(
        repository_,
        RepositoryWatcher::Options{.poll_interval = options_.watch_interval,
                                   .settle_interval = options_.settle_interval,
                                   .time = options_.time},
        [this](const std::string& name, const std::vector<int64_t>& stable) {
          OnRepositoryChange(name, stable);
        });
  }
  return absl::OkStatus();
}

absl::Status ModelManager::Load(std::string_view name) {
  Mutex mu;
  CondVar cv;
  std::optional<absl::Status> result;
  LoadAsync(name, [&](absl::Status status) {
    MutexLock lock(&mu);
    result = std::move(status);
    cv.NotifyAll();
  });
  MutexLock lock(&mu);
  cv.Wait(&mu, [&] { return result.has_value(); });
  return *result;
}

void ModelManager::LoadAsync(std::string_view name, DoneCallback done) {
  // Checked before the name becomes a path: no "..", no separator, nothing unprintable.
  if (absl::Status valid = ValidateModelName(name); !valid.ok()) return done(valid);
  std::error_code ec;
  const std::string model(name);
  if (!std::filesystem::is_directory(repository_ / model, ec)) {
    return done(absl::NotFoundError(StrCat("no model folder '", name, "' in the repository")));
  }
  Reconcile(model, /*force=*/true, nullptr, std::move(done));
}

absl::Status ModelManager::Unload(std::string_view name) {
  std::vector<ModelHandle> dropped;
  Callbacks callbacks;
  {
    MutexLock lock(&mu_);
    auto found = models_.find(name);
    if (found == models_.end()) return UnknownModelError(name);
    ModelEntry& entry = found->second;
    entry.requested = false;
    for (auto& [version, v] : entry.versions) {
      if (v.state == ModelState::kReady || v.state == ModelState::kLoading ||
          v.state == ModelState::kUnloaded) {
        UnloadVersion(found->first, version, v, ModelState::kUnloaded, "unloaded by request",
                      &dropped, &callbacks);
      }
    }
    counters_.unloads += dropped.size();
    PublishSnapshot();
  }
  for (auto& callback : callbacks) callback();
  ReleaseLater(&dropped);
  return absl::OkStatus();
}

void ModelManager::ApplyModelFolder(const std::string& name, ModelEntry& entry,
                                    ModelFolder folder) {
  absl::StatusOr<ModelConfig>& parsed = folder.config;
  if (!parsed.ok()) {
    if (entry.config) {
      // A broken edit of a served model's config: keep serving what is loaded.
      spdlog::error("model {}: config.yaml not applied, the previous config keeps serving: {}",
                    name, std::string(parsed.status().message()));
      return;
    }
    entry.config_status = parsed.status();
    spdlog::error("model {}: UNAVAILABLE: {}", name, std::string(parsed.status().message()));
    return;
  }
  const std::string& text = *folder.text;
  Backend* const backend = folder.backend;
  const bool changed = entry.config && entry.config_text != text;
  entry.config_status = absl::OkStatus();
  entry.config_text = text;
  entry.backend = backend;
  auto config = std::make_shared<const ModelConfig>(*std::move(parsed));
  if (!entry.config || changed) entry.traffic = config->lifecycle.traffic;
  entry.lazy = options_.lazy_all || config->lifecycle.lazy;
  // The same text parses to the same config: keeping it keeps what a load completed.
  if (!entry.config || changed) entry.config = std::move(config);

  entry.wanted = SelectVersions(entry.config->lifecycle.version_policy, folder.versions);
  if (entry.wanted.empty()) {
    entry.config_status = absl::NotFoundError(
        StrCat(entry.dir.string(), ": no version folder (for example ",
               (entry.dir / "1" / backend->model_filename()).string(), ") for version_policy ",
               DescribeVersionPolicy(entry.config->lifecycle.version_policy)));
    spdlog::error("model {}: UNAVAILABLE: {}", name, std::string(entry.config_status.message()));
  }
  for (int64_t version : entry.wanted) {
    VersionEntry& v = entry.versions[version];
    if (v.state == ModelState::kUnloaded && v.reason.empty()) {
      v.reason = !entry.requested ? "not loaded"
                 : entry.lazy     ? "lazy: loads on its first request"
                                  : "";
    }
  }
  if (changed) {
    // Served versions reload with the new config while they keep serving the old one.
    for (auto& [version, v] : entry.versions) {
      if (v.state == ModelState::kReady) v.reason = "config changed";
    }
  }
}

void ModelManager::Reconcile(const std::string& name, bool force,
                             const std::vector<int64_t>* stable, DoneCallback done) {
  auto group = std::make_shared<JobGroup>();
  group->done = std::move(done);
  std::vector<ModelHandle> dropped;
  Callbacks callbacks;
  bool nothing_queued = false;
  {
    // The folder is read before mu_ is taken: requests for other models never wait for the
    // file system (or for a config generated from a model file).
    MutexLock folder_lock(&folders_mu_);
    ModelFolder folder = ReadModelFolder(repository_, name, stable, backends_, options_.defaults);
    MutexLock lock(&mu_);
    ModelEntry& entry = models_[name];
    if (entry.dir.empty()) entry.dir = repository_ / name;
    const std::string previous_config = entry.config_text;
    ApplyModelFolder(name, entry, std::move(folder));
    const bool changed = !previous_config.empty() && previous_config != entry.config_text;
    if (force) entry.requested = true;
    if (!entry.config_status.ok()) {
      group->first_error = entry.config_status;
    } else if (entry.requested) {
      const bool preserve_resources = entry.config->lifecycle.resource_preserving;
      // resource_preserving: what is going away is unloaded before its replacement loads.
      if (preserve_resources) DropUnwanted(name, entry, &dropped, &callbacks);
      for (int64_t version : entry.wanted) {
        VersionEntry& v = entry.versions[version];
        if (v.state == ModelState::kReady && changed && preserve_resources) {
          UnloadVersion(name, version, v, ModelState::kUnloaded,
                        "reloading with the new config (resource_preserving)", &dropped,
                        &callbacks);
          Enqueue(LoadJob{name, version, /*replace=*/false, group});
        } else if (v.state == ModelState::kReady) {
          if (changed) Enqueue(LoadJob{name, version, /*replace=*/true, group});
        } else if (v.state != ModelState::kLoading && (force || !entry.lazy)) {
          Enqueue(LoadJob{name, version, /*replace=*/false, group});
        }
      }
    }
    // Decided under the lock: once it is released the loader may finish the jobs and call
    // `done` itself.
    nothing_queued = group->pending == 0;
    if (nothing_queued) DropUnwanted(name, entry, &dropped, &callbacks);
    PublishSnapshot();
  }
  for (auto& callback : callbacks) callback();
  ReleaseLater(&dropped);
  if (nothing_queued) group->done(Detached(group->first_error));
}

void ModelManager::OnRepositoryChange(const std::string& name, const std::vector<int64_t>& stable) {
  std::error_code ec;
  if (!std::filesystem::is_directory(repository_ / name, ec)) {
    spdlog::info("model {}: folder removed from the repository; unloading", name);
    Unload(name).IgnoreError();
    return;
  }
  spdlog::info("model {}: repository changed (settled versions: {})", name, StrJoin(stable, ", "));
  Reconcile(name, /*force=*/false, &stable, [name](const absl::Status& status) {
    if (!status.ok()) {
      spdlog::error("model {}: reload after a repository change failed: {}", name,
                    std::string(status.message()));
    }
  });
}

}  // namespace inferd
