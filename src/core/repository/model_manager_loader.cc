// The model manager's loader thread: loads run one at a time, each in named steps
// (RunLoadJob): plan under mu_, check the file without it, reserve memory (evicting idle
// models) under mu_, load and warm up without it, then publish or record the failure under
// mu_. The budget arithmetic is resource_tracker.h's.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "core/memory/memory_budget.h"
#include "core/memory/process_memory.h"
#include "core/repository/file_digest.h"
#include "core/repository/model_loader.h"
#include "core/repository/model_manager.h"

namespace inferd {

namespace {

uint64_t FileBytes(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

}  // namespace

struct ModelManager::LoadPlan {
  VersionKey key;
  std::shared_ptr<const ModelConfig> config;  // null: the model has no usable config
  Backend* backend = nullptr;
  std::filesystem::path dir;
  std::filesystem::path file;  // the version's model file
  std::string device;
  std::string expected_sha;              // config.yaml's sha256 for the version, if any
  uint64_t estimate = 0;                 // bytes: the last load's, else the file's size
  std::string sha256;                    // of `file`, once read
  std::shared_ptr<BackendModel> shared;  // an identical loaded file's engine model
};

struct ModelManager::LoadedVersion {
  std::unique_ptr<ServedModel> model;
  double load_ms = 0;
  uint64_t rss_growth_bytes = 0;
};

std::string ModelManager::DeviceOf(const ModelEntry& entry) {
  return entry.config && !entry.config->instances.empty() ? entry.config->instances.front().device
                                                          : "cpu";
}

absl::Status ModelManager::Detached(const absl::Status& status) {
  return status.ok() ? absl::OkStatus()
                     : absl::Status(status.code(), std::string(status.message()));
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

std::vector<VersionFootprint> ModelManager::Footprints() const {
  std::vector<VersionFootprint> footprints;
  for (const auto& [name, entry] : models_) {
    const std::string device = DeviceOf(entry);
    const bool pinned = entry.config && entry.config->lifecycle.pin;
    for (const auto& [version, v] : entry.versions) {
      const bool ready = v.state == ModelState::kReady;
      const bool busy =
          ready && v.handle && (v.handle.use_count() > 1 || v.handle->in_flight() > 0);
      footprints.push_back({VersionKey{name, version}, device, ready, v.memory_bytes,
                            v.reserved_bytes, v.sha256, v.usage->last_used(), pinned, busy});
    }
  }
  return footprints;
}

absl::Status ModelManager::MakeRoom(const std::string& device, uint64_t needed,
                                    const VersionKey& loading, std::vector<ModelHandle>* dropped) {
  absl::StatusOr<std::vector<VersionKey>> victims =
      resources_.ChooseEvictions(device, needed, loading, Footprints());
  if (!victims.ok()) return victims.status();
  Callbacks unused;
  for (const auto& [name, version] : *victims) {
    VersionEntry& v = models_[name].versions[version];
    const int64_t idle_s = std::chrono::duration_cast<std::chrono::seconds>(options_.time->Now() -
                                                                            v.usage->last_used())
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
  // LoRA adapters are files of each model's own version folder, loaded into its engine: an
  // engine with adapters is never shared (another model sharing it would serve adapters it
  // does not declare, or lack those it does, and count their bytes as its own).
  if (!a.adapters.empty() || !b.adapters.empty()) return false;
  return a.parameters == b.parameters && a.precision == b.precision &&
         a.max_batch_size == b.max_batch_size && SameSpecs(a.inputs, b.inputs) &&
         SameSpecs(a.outputs, b.outputs);
}

}  // namespace

std::shared_ptr<BackendModel> ModelManager::FindSharedWeights(const std::string& sha256,
                                                              const ModelEntry& entry) const {
  // No digest (a pipeline has no model file; a file that could not be read): nothing to share.
  if (sha256.empty()) return nullptr;
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
  LoadPlan plan = PlanLoad(job);
  absl::Status failure = CheckModelFile(plan);
  std::vector<ModelHandle> dropped;
  if (failure.ok()) failure = ReserveMemory(plan, &dropped);
  Release(&dropped);

  const TimePoint start = Clock::now();
  LoadedVersion loaded;
  if (failure.ok()) failure = LoadEngine(plan, &loaded);

  Callbacks callbacks;
  {
    MutexLock lock(&mu_);
    models_[job.name].versions[job.version].reserved_bytes = 0;
    if (loaded.model) failure = PublishLoaded(job, plan, std::move(loaded), &dropped, &callbacks);
    if (!failure.ok()) RecordLoadFailure(job, failure, &callbacks);
    FinishJobGroup(job, failure, &callbacks);
    PublishSnapshot();
  }
  if (options_.observers != nullptr) {
    options_.observers->OnModelLoadFinished(job.name, job.version, Clock::now() - start, failure);
  }
  for (auto& callback : callbacks) callback();
  Release(&dropped);
}

ModelManager::LoadPlan ModelManager::PlanLoad(const LoadJob& job) {
  LoadPlan plan;
  plan.key = VersionKey{job.name, job.version};
  MutexLock lock(&mu_);
  ModelEntry& entry = models_[job.name];
  plan.config = entry.config;
  plan.backend = entry.backend;
  plan.dir = entry.dir;
  plan.device = DeviceOf(entry);
  plan.estimate = entry.versions[job.version].memory_bytes;
  if (plan.config) {
    auto it = plan.config->lifecycle.sha256.find(job.version);
    if (it != plan.config->lifecycle.sha256.end()) plan.expected_sha = it->second;
  }
  if (plan.backend) {
    plan.file = plan.dir / std::to_string(job.version) / plan.backend->model_filename();
  }
  return plan;
}

absl::Status ModelManager::CheckModelFile(LoadPlan& plan) {
  if (plan.config == nullptr || plan.backend == nullptr) {
    return absl::UnavailableError(StrCat("model '", plan.key.name, "' has no usable config"));
  }
  if (!plan.backend->has_model_file()) return absl::OkStatus();
  absl::Status failure;
  // The digest serves both the integrity check and weight sharing.
  absl::StatusOr<std::string> digest = Sha256OfFile(plan.file);
  if (!digest.ok()) {
    // Without a digest to check, the backend's own error says best what is missing.
    if (!plan.expected_sha.empty()) failure = digest.status();
  } else if (!plan.expected_sha.empty() && *digest != plan.expected_sha) {
    failure = absl::DataLossError(
        StrCat(plan.file.string(), ": SHA-256 is ", *digest, " but config.yaml's sha256.",
               plan.key.version, " says ", plan.expected_sha,
               ": the file is truncated, corrupt or not the intended one"));
  } else {
    plan.sha256 = *std::move(digest);
  }
  if (plan.estimate == 0) plan.estimate = FileBytes(plan.file);
  return failure;
}

absl::Status ModelManager::ReserveMemory(LoadPlan& plan, std::vector<ModelHandle>* dropped) {
  MutexLock lock(&mu_);
  ModelEntry& entry = models_[plan.key.name];
  absl::Status failure = CheckInstanceCap(plan.key.name, plan.key.version, *plan.config);
  plan.shared = FindSharedWeights(plan.sha256, entry);
  const uint64_t needed = plan.shared ? 0 : plan.estimate;
  if (failure.ok()) failure = MakeRoom(plan.device, needed, plan.key, dropped);
  if (failure.ok()) entry.versions[plan.key.version].reserved_bytes = needed;
  PublishSnapshot();  // MakeRoom may have evicted
  return failure;
}

absl::Status ModelManager::LoadEngine(const LoadPlan& plan, LoadedVersion* loaded) const {
  const std::string& name = plan.key.name;
  const int64_t version = plan.key.version;
  const uint64_t rss_before = ResidentBytes();
  const TimePoint start = Clock::now();
  spdlog::info("model {}: loading version {} ({}{})", name, version, plan.config->backend,
               plan.shared ? ", sharing the weights of an identical loaded file" : "");
  absl::StatusOr<std::unique_ptr<ServedModel>> result = LoadModelVersion(
      *plan.backend, plan.config, plan.dir, version, plan.shared,
      options_.observers != nullptr ? options_.observers->ForModel(name, version) : nullptr);
  if (!result.ok()) return result.status();
  loaded->model = *std::move(result);
  loaded->load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const uint64_t rss_after = ResidentBytes();
  loaded->rss_growth_bytes = rss_after > rss_before ? rss_after - rss_before : 0;
  return absl::OkStatus();
}

absl::Status ModelManager::PublishLoaded(const LoadJob& job, const LoadPlan& plan,
                                         LoadedVersion loaded, std::vector<ModelHandle>* dropped,
                                         Callbacks* callbacks) {
  ModelEntry& entry = models_[job.name];
  VersionEntry& v = entry.versions[job.version];
  uint64_t bytes =
      plan.shared ? plan.shared->memory_bytes() : loaded.model->backend_model()->memory_bytes();
  if (bytes == 0) bytes = FileBytes(plan.file);
  // The estimate was the file size or the last load: check the measured size again.
  absl::Status fits =
      plan.shared ? absl::OkStatus() : MakeRoom(plan.device, bytes, plan.key, dropped);
  if (!entry.requested) {
    // Unloaded by the API while it loaded: not published.
    dropped->push_back(ModelHandle(std::move(loaded.model)));
    v.state = ModelState::kUnloaded;
    v.reason = "unloaded by request";
    return absl::OkStatus();
  }
  if (!fits.ok()) {
    dropped->push_back(ModelHandle(std::move(loaded.model)));
    return fits;
  }
  ModelHandle old = std::move(v.handle);
  if (old) dropped->push_back(std::move(old));
  v.handle = ModelHandle(std::move(loaded.model));
  if (entry.config == plan.config &&
      (plan.config->inputs.empty() || plan.config->outputs.empty())) {
    // config.yaml left the signature to the model file: metadata now shows what the
    // load read (the model's later versions are checked against it).
    entry.config = std::make_shared<const ModelConfig>(v.handle->config());
  }
  v.state = ModelState::kReady;
  v.reason.clear();
  v.memory_bytes = bytes;
  v.rss_growth_bytes = loaded.rss_growth_bytes;
  v.sha256 = plan.sha256;
  v.usage->Touch(options_.time->Now());
  v.last_load_ms = loaded.load_ms;
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
      job.name, job.version, loaded.load_ms, FormatBytes(bytes), plan.shared ? " shared" : "",
      FormatBytes(v.rss_growth_bytes),
      FormatBytes(ResourceTracker::UsedBytes(plan.device, Footprints())),
      FormatBytes(resources_.BudgetBytes(plan.device)), plan.device);
  v.waiters.Serve(v.handle, callbacks);
  DropUnwanted(job.name, entry, dropped, callbacks);
  return absl::OkStatus();
}

void ModelManager::RecordLoadFailure(const LoadJob& job, const absl::Status& failure,
                                     Callbacks* callbacks) {
  VersionEntry& v = models_[job.name].versions[job.version];
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
  v.waiters.Fail(absl::StatusCode::kUnavailable,
                 StrCat("model '", job.name, "' could not be loaded: ", reason), callbacks);
}

void ModelManager::FinishJobGroup(const LoadJob& job, const absl::Status& failure,
                                  Callbacks* callbacks) {
  if (!job.group) return;
  if (!failure.ok() && job.group->first_error.ok()) job.group->first_error = failure;
  if (--job.group->pending == 0) {
    callbacks->push_back([group = job.group, status = Detached(job.group->first_error)]() mutable {
      group->done(std::move(status));
    });
  }
}

}  // namespace inferd
