// The model manager's loading side: applying model folders, the loader thread (integrity
// check, weight sharing, budget and eviction, load and warm-up, publication), and the
// housekeeping thread (request wait timeouts, idle unloads).
#include <algorithm>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "common/timed_wait.h"
#include "core/memory/eviction.h"
#include "core/memory/memory_budget.h"
#include "core/memory/process_memory.h"
#include "core/repository/file_digest.h"
#include "core/repository/model_loader.h"
#include "core/repository/model_manager.h"
#include "core/repository/version_policy.h"

namespace inferd {

namespace {

// A copy that shares no reference count with `status`: the loader thread drops its own
// copies while the caller reads this one, and Debian's Abseil (not built for
// ThreadSanitizer) hides its atomic reference counting from TSan.
absl::Status Detached(const absl::Status& status) {
  return status.ok() ? absl::OkStatus()
                     : absl::Status(status.code(), std::string(status.message()));
}

uint64_t FileBytes(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

}  // namespace

std::string ModelManager::DeviceOf(const ModelEntry& entry) {
  return entry.config && !entry.config->instances.empty() ? entry.config->instances.front().device
                                                          : "cpu";
}

uint64_t ModelManager::BudgetBytes(std::string_view device) const {
  auto it = options_.memory_budgets.find(device);
  return it != options_.memory_budgets.end() ? it->second : DefaultBudgetBytes(device);
}

uint64_t ModelManager::UsedBytes(const std::string& device) const {
  uint64_t used = 0;
  std::set<std::string> counted;  // shared weights count once
  for (const auto& [name, entry] : models_) {
    if (DeviceOf(entry) != device) continue;
    for (const auto& [version, v] : entry.versions) {
      used += v.reserved_bytes;
      if (v.state != ModelState::kReady) continue;
      if (!v.sha256.empty() && !counted.insert(v.sha256).second) continue;
      used += v.memory_bytes;
    }
  }
  return used;
}

void ModelManager::Release(std::vector<ModelHandle>* dropped) {
  if (dropped->empty()) return;
  // The last handle of a version finishes its queued requests and frees its weights here,
  // unless a request still holds it (then when that request ends).
  dropped->clear();
  ReleaseFreedMemory();
}

void ModelManager::ReleaseLater(std::vector<ModelHandle>* dropped) {
  if (dropped->empty()) return;
  MutexLock lock(&mu_);
  for (ModelHandle& handle : *dropped) graveyard_.push_back(std::move(handle));
  dropped->clear();
  work_.NotifyAll();
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

void ModelManager::Enqueue(LoadJob job) {
  VersionEntry& v = models_[job.name].versions[job.version];
  if (!job.replace) {
    v.state = ModelState::kLoading;
    v.reason.clear();
  }
  if (job.group) ++job.group->pending;
  jobs_.push_back(std::move(job));
  work_.NotifyAll();
}

void ModelManager::LoaderLoop() {
  while (true) {
    LoadJob job;
    {
      MutexLock lock(&mu_);
      work_.Wait(&mu_,
                 [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    RunLoadJob(job);
  }
}

absl::Status ModelManager::MakeRoom(const std::string& device, uint64_t needed,
                                    const VersionKey& loading, std::vector<ModelHandle>* dropped) {
  std::vector<EvictionCandidate> candidates;
  std::map<std::string, int> holders;  // READY versions per weights digest
  for (const auto& [name, entry] : models_) {
    for (const auto& [version, v] : entry.versions) {
      if (v.state == ModelState::kReady && !v.sha256.empty()) ++holders[v.sha256];
    }
  }
  for (const auto& [name, entry] : models_) {
    if (DeviceOf(entry) != device) continue;
    // A model's own served versions are never evicted for its new version: that would turn
    // an availability-preserving swap into a gap in service (version_swap chooses that).
    if (name == loading.name) continue;
    for (const auto& [version, v] : entry.versions) {
      if (v.state != ModelState::kReady) continue;
      // Evicting one of several holders of shared weights frees nothing.
      const bool shared = !v.sha256.empty() && holders[v.sha256] > 1;
      const bool busy = v.handle.use_count() > 1 || v.handle->in_flight() > 0;
      candidates.push_back({VersionKey{name, version}, shared ? 0 : v.memory_bytes, v.last_used,
                            entry.config->lifecycle.pin, busy});
    }
  }
  const uint64_t budget = BudgetBytes(device);
  const uint64_t used = UsedBytes(device);
  absl::StatusOr<std::vector<VersionKey>> victims =
      ChooseEvictions(std::move(candidates), used, needed, budget);
  if (!victims.ok()) {
    return absl::UnavailableError(StrCat(
        loading.ToString(), " cannot be loaded within the ", device, " memory budget (",
        FormatBytes(used), " of ", FormatBytes(budget), " in use): ", victims.status().message()));
  }
  Callbacks unused;
  for (const auto& [name, version] : *victims) {
    VersionEntry& v = models_[name].versions[version];
    const int64_t idle_s =
        std::chrono::duration_cast<std::chrono::seconds>(options_.time->Now() - v.last_used)
            .count();
    spdlog::info("memory: evicting {} ({}, idle {} s, least recently used) to load {} on {}",
                 VersionKey{name, version}.ToString(), FormatBytes(v.memory_bytes), idle_s,
                 loading.ToString(), device);
    ++v.evictions;
    ++counters_.evictions;
    v.evicted = true;
    UnloadVersion(name, version, v, ModelState::kUnloaded,
                  StrCat("evicted to make room for ", loading.ToString(),
                         "; loads again on its next request"),
                  dropped, &unused);
  }
  return absl::OkStatus();
}

void ModelManager::UnloadVersion(const std::string& name, int64_t version, VersionEntry& v,
                                 ModelState state, const std::string& reason,
                                 std::vector<ModelHandle>* dropped, Callbacks* callbacks) {
  if (v.handle) dropped->push_back(std::move(v.handle));
  v.handle.reset();
  if (v.state != ModelState::kLoading) {
    v.state = state;
    v.reason = reason;
  }
  spdlog::info("model {} version {}: {}", name, version, reason);
  for (Waiter& waiter : v.waiters) {
    callbacks->push_back([done = std::move(waiter.done), name, reason] {
      done(absl::UnavailableError(StrCat("model '", name, "': ", reason)));
    });
  }
  v.waiters.clear();
}

void ModelManager::DropUnwanted(const std::string& name, ModelEntry& entry,
                                std::vector<ModelHandle>* dropped, Callbacks* callbacks) {
  for (auto it = entry.versions.begin(); it != entry.versions.end();) {
    const bool wanted = std::binary_search(entry.wanted.begin(), entry.wanted.end(), it->first);
    if (wanted || it->second.state == ModelState::kLoading) {
      ++it;
      continue;
    }
    if (it->second.state == ModelState::kReady) ++counters_.unloads;
    UnloadVersion(name, it->first, it->second, ModelState::kUnloaded,
                  "no longer served (version policy or folder removed)", dropped, callbacks);
    it = entry.versions.erase(it);
  }
  // Labels and weights must keep pointing at loaded versions.
  std::vector<int64_t> ready;
  for (const auto& [version, v] : entry.versions) {
    if (v.state == ModelState::kReady) ready.push_back(version);
  }
  if (!entry.traffic.labels.empty() || !entry.traffic.weights.empty()) {
    if (absl::Status valid = ValidateTrafficRules(entry.traffic, ready);
        !valid.ok() && !ready.empty()) {
      spdlog::warn(
          "model {}: traffic rules point at a version that is not loaded ({}); "
          "requests without a version go to the highest ready version",
          name, std::string(valid.message()));
    }
  }
}

namespace {

bool SameSpecs(const std::vector<TensorSpec>& a, const std::vector<TensorSpec>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const TensorSpec& x, const TensorSpec& y) {
                      return x.name == y.name && x.datatype == y.datatype && x.dims == y.dims;
                    });
}

// Whether an engine model loaded for `a` serves `b` exactly as loading it for `b` would: the
// backend checks (signature, precision, parameters) ran against `a`'s config at its load.
bool SameEngineConfig(const ModelConfig& a, const ModelConfig& b) {
  return a.parameters == b.parameters && a.precision == b.precision &&
         a.max_batch_size == b.max_batch_size && SameSpecs(a.inputs, b.inputs) &&
         SameSpecs(a.outputs, b.outputs);
}

}  // namespace

std::shared_ptr<BackendModel> ModelManager::FindSharedWeights(const std::string& sha256,
                                                              const ModelEntry& entry) const {
  for (const auto& [name, other] : models_) {
    if (other.backend != entry.backend || DeviceOf(other) != DeviceOf(entry)) continue;
    for (const auto& [version, v] : other.versions) {
      // Compared with the config the engine was loaded with, not the entry's current one:
      // on a reload after a config change the entry already holds the new config, and
      // comparing it with itself kept the old engine (fp32 after `precision: bf16`).
      if (v.state == ModelState::kReady && v.sha256 == sha256 && v.handle &&
          SameEngineConfig(v.handle->config(), *entry.config)) {
        return v.handle->backend_model();
      }
    }
  }
  return nullptr;
}

absl::Status ModelManager::CheckInstanceCap(const std::string& name, int64_t version,
                                            const ModelConfig& config) const {
  int64_t running = 0;
  for (const auto& [other_name, other] : models_) {
    for (const auto& [other_version, v] : other.versions) {
      if (!v.handle || (other_name == name && other_version == version)) continue;
      running += v.handle->config().total_instances();
    }
  }
  const int64_t wanted = config.total_instances();
  if (running + wanted > options_.max_total_instances) {
    return absl::ResourceExhaustedError(
        StrCat("model '", name, "' asks for ", wanted, " execution instances and ", running,
               " already run in this process, over its limit of ", options_.max_total_instances,
               "; lower instances[].count here or in other models"));
  }
  return absl::OkStatus();
}

void ModelManager::RunLoadJob(const LoadJob& job) {
  const VersionKey key{job.name, job.version};
  std::shared_ptr<const ModelConfig> config;
  Backend* backend = nullptr;
  std::filesystem::path dir;
  std::string device;
  std::string expected_sha;
  uint64_t estimate = 0;
  {
    MutexLock lock(&mu_);
    ModelEntry& entry = models_[job.name];
    config = entry.config;
    backend = entry.backend;
    dir = entry.dir;
    device = DeviceOf(entry);
    VersionEntry& v = entry.versions[job.version];
    estimate = v.memory_bytes;
    if (config) {
      auto it = config->lifecycle.sha256.find(job.version);
      if (it != config->lifecycle.sha256.end()) expected_sha = it->second;
    }
  }
  absl::Status failure;
  std::string sha256;
  const std::filesystem::path file =
      backend ? dir / std::to_string(job.version) / backend->model_filename()
              : std::filesystem::path();
  if (config == nullptr || backend == nullptr) {
    failure = absl::UnavailableError(StrCat("model '", job.name, "' has no usable config"));
  } else {
    // The digest serves both the integrity check and weight sharing.
    absl::StatusOr<std::string> digest = Sha256OfFile(file);
    if (!digest.ok()) {
      // Without a digest to check, the backend's own error says best what is missing.
      if (!expected_sha.empty()) failure = digest.status();
    } else if (!expected_sha.empty() && *digest != expected_sha) {
      failure = absl::DataLossError(StrCat(
          file.string(), ": SHA-256 is ", *digest, " but config.yaml's sha256.", job.version,
          " says ", expected_sha, ": the file is truncated, corrupt or not the intended one"));
    } else {
      sha256 = *std::move(digest);
    }
    if (estimate == 0) estimate = FileBytes(file);
  }

  std::vector<ModelHandle> dropped;
  std::shared_ptr<BackendModel> shared;
  if (failure.ok()) {
    MutexLock lock(&mu_);
    ModelEntry& entry = models_[job.name];
    failure = CheckInstanceCap(job.name, job.version, *config);
    shared = FindSharedWeights(sha256, entry);
    const uint64_t needed = shared ? 0 : estimate;
    if (failure.ok()) failure = MakeRoom(device, needed, key, &dropped);
    if (failure.ok()) entry.versions[job.version].reserved_bytes = needed;
  }
  Release(&dropped);

  std::unique_ptr<ServedModel> loaded;
  const uint64_t rss_before = ResidentBytes();
  const TimePoint start = Clock::now();
  if (failure.ok()) {
    spdlog::info("model {}: loading version {} ({}{})", job.name, job.version, config->backend,
                 shared ? ", sharing the weights of an identical loaded file" : "");
    absl::StatusOr<std::unique_ptr<ServedModel>> result = LoadModelVersion(
        *backend, config, dir, job.version, shared,
        options_.observers != nullptr ? options_.observers->ForModel(job.name, job.version)
                                      : nullptr);
    if (result.ok()) {
      loaded = *std::move(result);
    } else {
      failure = result.status();
    }
  }
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const uint64_t rss_after = ResidentBytes();

  Callbacks callbacks;
  {
    MutexLock lock(&mu_);
    ModelEntry& entry = models_[job.name];
    VersionEntry& v = entry.versions[job.version];
    v.reserved_bytes = 0;
    if (loaded) {
      uint64_t bytes = shared ? shared->memory_bytes() : loaded->backend_model()->memory_bytes();
      if (bytes == 0) bytes = FileBytes(file);
      // The estimate was the file size or the last load: check the measured size again.
      absl::Status fits = shared ? absl::OkStatus() : MakeRoom(device, bytes, key, &dropped);
      if (!entry.requested) {
        // Unloaded by the API while it loaded: not published.
        dropped.push_back(ModelHandle(std::move(loaded)));
        v.state = ModelState::kUnloaded;
        v.reason = "unloaded by request";
      } else if (!fits.ok()) {
        failure = fits;
        dropped.push_back(ModelHandle(std::move(loaded)));
      } else {
        ModelHandle old = std::move(v.handle);
        if (old) dropped.push_back(std::move(old));
        v.handle = ModelHandle(std::move(loaded));
        if (entry.config == config && (config->inputs.empty() || config->outputs.empty())) {
          // config.yaml left the signature to the model file: metadata now shows what the
          // load read (the model's later versions are checked against it).
          entry.config = std::make_shared<const ModelConfig>(v.handle->config());
        }
        v.state = ModelState::kReady;
        v.reason.clear();
        v.memory_bytes = bytes;
        v.rss_growth_bytes = rss_after > rss_before ? rss_after - rss_before : 0;
        v.sha256 = sha256;
        v.last_used = options_.time->Now();
        v.last_load_ms = load_ms;
        ++v.loads;
        ++counters_.loads;
        if (v.evicted) {
          ++v.reloads;
          ++counters_.reloads;
          v.evicted = false;
        }
        spdlog::info(
            "model {}: version {} READY in {:.0f} ms ({}{}, resident memory +{}; {} of {} in use "
            "on {})",
            job.name, job.version, load_ms, FormatBytes(bytes), shared ? " shared" : "",
            FormatBytes(v.rss_growth_bytes), FormatBytes(UsedBytes(device)),
            FormatBytes(BudgetBytes(device)), device);
        for (Waiter& waiter : v.waiters) {
          callbacks.push_back([done = std::move(waiter.done), handle = v.handle] { done(handle); });
        }
        v.waiters.clear();
        DropUnwanted(job.name, entry, &dropped, &callbacks);
      }
    }
    if (!failure.ok()) {
      ++counters_.load_failures;
      const std::string reason(failure.message());
      if (job.replace && v.state == ModelState::kReady) {
        v.reason = StrCat("reload failed, the loaded version keeps serving: ", reason);
        spdlog::error("model {}: version {}: {}", job.name, job.version, v.reason);
      } else {
        // A budget failure may succeed later (another model goes idle): keep it loadable.
        v.state = absl::IsUnavailable(failure) ? ModelState::kUnloaded : ModelState::kUnavailable;
        v.reason = reason;
        spdlog::error("model {}: version {} {}: {}", job.name, job.version, ModelStateName(v.state),
                      reason);
      }
      for (Waiter& waiter : v.waiters) {
        callbacks.push_back([done = std::move(waiter.done), failure, name = job.name] {
          done(absl::UnavailableError(
              StrCat("model '", name, "' could not be loaded: ", failure.message())));
        });
      }
      v.waiters.clear();
    }
    if (job.group) {
      if (!failure.ok() && job.group->first_error.ok()) job.group->first_error = failure;
      if (--job.group->pending == 0) {
        callbacks.push_back(
            [group = job.group, status = Detached(job.group->first_error)]() mutable {
              group->done(std::move(status));
            });
      }
    }
  }
  if (options_.observers != nullptr) {
    options_.observers->OnModelLoadFinished(job.name, job.version, Clock::now() - start, failure);
  }
  for (auto& callback : callbacks) callback();
  Release(&dropped);
}

void ModelManager::HousekeepingLoop() {
  while (true) {
    {
      MutexLock lock(&mu_);
      // A pass every 50 ms of the time source (idle unloads and load timeouts are in its
      // terms), and at once when handles wait in the graveyard.
      WaitUntil(
          *options_.time, work_, &mu_, options_.time->Now() + std::chrono::milliseconds(50),
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !graveyard_.empty(); });
      if (stopping_) return;
    }
    Housekeep();
  }
}

void ModelManager::Housekeep() {
  Callbacks callbacks;
  std::vector<ModelHandle> dropped;
  {
    MutexLock lock(&mu_);
    dropped.swap(graveyard_);
    const TimePoint now = options_.time->Now();
    for (auto& [name, entry] : models_) {
      const int64_t idle_s = entry.config ? entry.config->lifecycle.idle_unload_s : 0;
      for (auto& [version, v] : entry.versions) {
        // Requests waiting for a load past their timeout.
        for (auto it = v.waiters.begin(); it != v.waiters.end();) {
          if (it->deadline > now) {
            ++it;
            continue;
          }
          // Captured by copy under new names: clang 14 cannot capture structured bindings.
          callbacks.push_back([done = std::move(it->done), model = name, number = version] {
            done(absl::DeadlineExceededError(
                StrCat("model '", model, "' version ", number,
                       " is still loading and the request's timeout has passed")));
          });
          it = v.waiters.erase(it);
        }
        if (idle_s > 0 && v.state == ModelState::kReady && v.handle.use_count() == 1 &&
            v.handle->in_flight() == 0 && now - v.last_used >= std::chrono::seconds(idle_s)) {
          ++counters_.idle_unloads;
          v.evicted = true;
          UnloadVersion(name, version, v, ModelState::kUnloaded,
                        StrCat("idle for ", idle_s,
                               " s (idle_unload_s); loads again on its "
                               "next request"),
                        &dropped, &callbacks);
        }
      }
    }
  }
  for (auto& callback : callbacks) callback();
  Release(&dropped);
}

}  // namespace inferd
