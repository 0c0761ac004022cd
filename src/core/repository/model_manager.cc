// The model manager's public side: requests (choosing the version, waiting for a load),
// traffic rules, descriptions and reports, and shutdown. Start-up and the repository API
// are in model_manager_repository.cc, loads in model_manager_loader.cc, timeouts and idle
// unloads in model_manager_housekeeping.cc.
#include "core/repository/model_manager.h"

#include <algorithm>
#include <random>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/error_detail.h"
#include "common/strings.h"
#include "core/backend/infer_request.h"
#include "core/memory/process_memory.h"
#include "core/repository/repository_watcher.h"

namespace inferd {

absl::Status UnknownModelError(std::string_view name) {
  return WithErrorReason(absl::NotFoundError(StrCat("unknown model '", name, "'")),
                         ErrorReason::kUnknownModel);
}

std::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kReady:
      return "READY";
    case ModelState::kUnavailable:
      return "UNAVAILABLE";
    case ModelState::kUnloaded:
      return "UNLOADED";
  }
  return "UNKNOWN";
}

ModelManager::ModelManager(std::filesystem::path repository,
                           std::vector<std::unique_ptr<Backend>> backends,
                           ModelManagerOptions options)
    : repository_(std::move(repository)),
      backends_(std::move(backends)),
      options_(std::move(options)),
      resources_(options_.memory_budgets) {
  loader_ = std::thread([this] { LoaderLoop(); });
  housekeeping_ = std::thread([this] { HousekeepingLoop(); });
}

ModelManager::~ModelManager() { StopAll(); }

namespace {

// The versions a model serves now: what its policy wants, plus READY versions it no longer
// wants that keep serving until their replacement is ready (or because it failed).
template <typename Entry>
std::vector<int64_t> ServedVersions(const Entry& entry) {
  std::vector<int64_t> served = entry.wanted;
  for (const auto& [version, v] : entry.versions) {
    if (v.state == ModelState::kReady) served.push_back(version);
  }
  std::sort(served.begin(), served.end());
  served.erase(std::unique(served.begin(), served.end()), served.end());
  return served;
}

// Uniform in [0, 1), for traffic weights: one engine per thread, so that requests share
// no lock (and no engine state) to draw.
double UniformDraw() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

}  // namespace

std::shared_ptr<const ServingSnapshot> ModelManager::Snapshot() const {
  MutexLock lock(&snapshot_mu_);
  return snapshot_;
}

void ModelManager::PublishSnapshot() {
  auto snapshot = std::make_shared<ServingSnapshot>();
  for (const auto& [name, entry] : models_) {
    ServingModel& model =
        snapshot->models.emplace_hint(snapshot->models.end(), name, ServingModel{})->second;
    model.config = entry.config;
    model.config_ok = entry.config_status.ok();
    if (!model.config_ok) model.unavailable = std::string(entry.config_status.message());
    model.traffic = entry.traffic;
    for (const auto& [version, v] : entry.versions) {
      if (v.state == ModelState::kReady && v.handle) {
        model.ready.push_back({version, v.handle, v.usage});
      }
    }
  }
  std::shared_ptr<const ServingSnapshot> old;
  {
    MutexLock lock(&snapshot_mu_);
    old = std::exchange(snapshot_, std::move(snapshot));
  }
  // `old` goes here, or with the last request still reading it: it holds no model alive.
}

ModelHandle ModelManager::ServeFromSnapshot(std::string_view name, std::optional<int64_t> version,
                                            bool inference) const {
  const std::shared_ptr<const ServingSnapshot> snapshot = Snapshot();
  const ServingModel* model = snapshot->Find(name);
  if (model == nullptr) return nullptr;
  std::optional<double> u;
  if (inference && !model->traffic.weights.empty()) u = UniformDraw();
  const ServingVersion* chosen = ChooseServingVersion(*model, version, u);
  if (chosen == nullptr) return nullptr;
  ModelHandle handle = chosen->model.lock();
  // Null: unloaded since the snapshot was made; mu_ knows what happened to it.
  if (handle != nullptr && inference) chosen->usage->RecordRequest(options_.time->Now());
  return handle;
}

absl::StatusOr<int64_t> ModelManager::ChooseVersion(std::string_view name, const ModelEntry& entry,
                                                    std::optional<int64_t> version) {
  // On every request: no allocation unless it fails.
  if (!entry.config_status.ok()) {
    return absl::UnavailableError(
        StrCat("model '", name, "' is unavailable: ", entry.config_status.message()));
  }
  if (version) {
    auto it = entry.versions.find(*version);
    if (it == entry.versions.end() ||
        (it->second.state != ModelState::kReady &&
         !std::binary_search(entry.wanted.begin(), entry.wanted.end(), *version))) {
      return WithErrorReason(
          absl::NotFoundError(StrCat("model '", name, "' has no version ", *version,
                                     " (served: ", StrJoin(ServedVersions(entry), ", "), ")")),
          ErrorReason::kUnknownModel);
    }
    return *version;
  }
  if (!entry.traffic.weights.empty()) {
    const double u = UniformDraw();
    if (std::optional<int64_t> picked = PickWeightedVersion(entry.traffic, u)) {
      if (auto it = entry.versions.find(*picked);
          it != entry.versions.end() && it->second.state == ModelState::kReady) {
        return *picked;
      }
    }
  }
  // The highest READY version keeps serving while a newer one loads (zero downtime), or
  // when the newer one failed to load.
  for (auto it = entry.versions.rbegin(); it != entry.versions.rend(); ++it) {
    if (it->second.state == ModelState::kReady) return it->first;
  }
  if (entry.wanted.empty()) {
    return absl::UnavailableError(
        StrCat("model '", name, "' has no version to serve in ", entry.dir.string()));
  }
  return entry.wanted.back();
}

absl::StatusOr<ModelHandle> ModelManager::Acquire(std::string_view name,
                                                  std::optional<int64_t> version) const {
  if (ModelHandle ready = ServeFromSnapshot(name, version, /*inference=*/false)) return ready;
  MutexLock lock(&mu_);
  auto found = models_.find(name);
  if (found == models_.end()) return UnknownModelError(name);
  const ModelEntry& entry = found->second;
  if (!entry.config_status.ok()) {
    return absl::UnavailableError(
        StrCat("model '", name, "' is unavailable: ", entry.config_status.message()));
  }
  const std::vector<int64_t> served = ServedVersions(entry);
  if (version && !std::binary_search(served.begin(), served.end(), *version)) {
    return WithErrorReason(
        absl::NotFoundError(StrCat("model '", name, "' has no version ", *version,
                                   " (served: ", StrJoin(served, ", "), ")")),
        ErrorReason::kUnknownModel);
  }
  for (auto it = entry.versions.rbegin(); it != entry.versions.rend(); ++it) {
    if (version && it->first != *version) continue;
    if (it->second.state == ModelState::kReady) return it->second.handle;
  }
  std::string why = "no version is loaded";
  if (!entry.versions.empty()) {
    const VersionEntry& v = version ? entry.versions.at(*version) : entry.versions.rbegin()->second;
    why = StrCat(ModelStateName(v.state), v.reason.empty() ? "" : ": ", v.reason);
  }
  return absl::UnavailableError(StrCat("model '", name, "' is not ready (", why, ")"));
}

absl::Status ModelManager::FailedToLoad(std::string_view name,
                                        std::optional<int64_t> version) const {
  if (ServeFromSnapshot(name, version, /*inference=*/false)) return absl::OkStatus();
  bool failed = false;
  {
    MutexLock lock(&mu_);
    auto found = models_.find(name);
    if (found == models_.end() || found->second.versions.empty()) return absl::OkStatus();
    const ModelEntry& entry = found->second;
    if (!entry.config_status.ok()) {
      failed = true;
    } else {
      auto v = version ? entry.versions.find(*version) : std::prev(entry.versions.end());
      failed = v != entry.versions.end() && v->second.state == ModelState::kUnavailable;
    }
  }
  if (!failed) return absl::OkStatus();
  return Acquire(name, version).status();
}

void ModelManager::AcquireForInference(std::string_view name, std::optional<int64_t> version,
                                       int64_t timeout_us, AcquireCallback done) {
  if (timeout_us < 0 || timeout_us > kMaxTimeoutUs) {
    return done(absl::InvalidArgumentError(
        StrCat("timeout ", timeout_us, " us is out of range 0..", kMaxTimeoutUs, " (one day)")));
  }
  // A READY version: from the snapshot, without mu_. The rest (errors, versions that must
  // load first, one unloaded a moment ago) below, under mu_.
  if (ModelHandle ready = ServeFromSnapshot(name, version, /*inference=*/true)) {
    return done(std::move(ready));
  }
  absl::StatusOr<ModelHandle> answer;
  {
    MutexLock lock(&mu_);
    auto found = models_.find(name);
    if (found == models_.end()) {
      answer = UnknownModelError(name);
    } else {
      ModelEntry& entry = found->second;
      absl::StatusOr<int64_t> chosen = ChooseVersion(name, entry, version);
      if (!chosen.ok()) {
        answer = chosen.status();
      } else {
        VersionEntry& v = entry.versions[*chosen];
        v.usage->RecordRequest(options_.time->Now());
        switch (v.state) {
          case ModelState::kReady:
            answer = v.handle;
            break;
          case ModelState::kUnavailable:
            answer = absl::UnavailableError(
                StrCat("model '", name, "' version ", *chosen, " is unavailable: ", v.reason));
            break;
          case ModelState::kUnloaded:
            if (!entry.requested) {
              answer = absl::UnavailableError(
                  StrCat("model '", name, "' is not loaded (", v.reason.empty() ? "" : v.reason,
                         v.reason.empty() ? "" : "; ", "a repository load request loads it)"));
              break;
            }
            Enqueue(LoadJob{std::string(name), *chosen, /*replace=*/false, nullptr});
            [[fallthrough]];
          case ModelState::kLoading: {
            const TimePoint deadline =
                timeout_us > 0 ? options_.time->Now() + std::chrono::microseconds(timeout_us)
                               : TimePoint::max();
            v.waiters.Add(deadline, std::move(done));
            work_.NotifyAll();
            return;
          }
        }
      }
    }
  }
  done(std::move(answer));
}

absl::StatusOr<int64_t> ModelManager::ResolveLabel(std::string_view name,
                                                   std::string_view label) const {
  const std::shared_ptr<const ServingSnapshot> snapshot = Snapshot();
  const ServingModel* model = snapshot->Find(name);
  if (model == nullptr) return UnknownModelError(name);
  auto it = model->traffic.labels.find(label);
  if (it == model->traffic.labels.end()) {
    std::vector<std::string_view> known;
    for (const auto& [l, v] : model->traffic.labels) known.push_back(l);
    return absl::NotFoundError(StrCat("model '", name, "' has no label '", label,
                                      "' (labels: ", StrJoin(known, ", "), ")"));
  }
  return it->second;
}

absl::Status ModelManager::SetTrafficRules(std::string_view name, TrafficRules rules) {
  MutexLock lock(&mu_);
  auto found = models_.find(name);
  if (found == models_.end()) return UnknownModelError(name);
  std::vector<int64_t> ready;
  for (const auto& [version, v] : found->second.versions) {
    if (v.state == ModelState::kReady) ready.push_back(version);
  }
  if (absl::Status valid = ValidateTrafficRules(rules, ready); !valid.ok()) {
    return absl::InvalidArgumentError(StrCat("model '", name, "': ", valid.message()));
  }
  found->second.traffic = std::move(rules);
  PublishSnapshot();
  spdlog::info("model {}: traffic rules replaced", found->first);
  return absl::OkStatus();
}

absl::StatusOr<TrafficRules> ModelManager::GetTrafficRules(std::string_view name) const {
  MutexLock lock(&mu_);
  auto found = models_.find(name);
  if (found == models_.end()) return UnknownModelError(name);
  return found->second.traffic;
}

absl::StatusOr<std::shared_ptr<const ModelConfig>> ModelManager::ConfigOf(
    std::string_view name) const {
  const std::shared_ptr<const ServingSnapshot> snapshot = Snapshot();
  const ServingModel* model = snapshot->Find(name);
  if (model == nullptr) return UnknownModelError(name);
  if (!model->config_ok || !model->config) {
    return absl::UnavailableError(
        StrCat("model '", name, "' is unavailable: ", model->unavailable));
  }
  return model->config;
}

absl::StatusOr<ModelManager::Description> ModelManager::Describe(std::string_view name) const {
  MutexLock lock(&mu_);
  auto found = models_.find(name);
  if (found == models_.end()) return UnknownModelError(name);
  const ModelEntry& entry = found->second;
  if (!entry.config) {
    return absl::UnavailableError(
        StrCat("model '", name, "' is unavailable: ", entry.config_status.message()));
  }
  Description description{
      entry.config, std::string(entry.backend->platform()), ServedVersions(entry), {}};
  for (const auto& [version, v] : entry.versions) {
    if (v.state == ModelState::kReady) description.ready_versions.push_back(version);
  }
  return description;
}

std::vector<ModelStatus> ModelManager::Index() const {
  MutexLock lock(&mu_);
  std::vector<ModelStatus> index;
  for (const auto& [name, entry] : models_) {
    if (!entry.config_status.ok() || entry.versions.empty()) {
      const std::string reason =
          !entry.config_status.ok() ? std::string(entry.config_status.message())
          : !entry.requested        ? "not loaded"
                                    : StrCat(entry.dir.string(), ": no version folder");
      index.push_back({name, std::nullopt,
                       entry.requested ? ModelState::kUnavailable : ModelState::kUnloaded, reason});
      continue;
    }
    for (const auto& [version, v] : entry.versions) {
      index.push_back({name, version, v.state, v.state == ModelState::kReady ? "" : v.reason});
    }
  }
  return index;
}

std::vector<ModelHandle> ModelManager::ReadyModels() const {
  MutexLock lock(&mu_);
  std::vector<ModelHandle> models;
  for (const auto& [name, entry] : models_) {
    for (const auto& [version, v] : entry.versions) {
      if (v.state == ModelState::kReady) models.push_back(v.handle);
    }
  }
  return models;
}

std::vector<std::string> ModelManager::ReadyModelNames() const {
  MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : models_) {
    for (const auto& [version, v] : entry.versions) {
      if (v.state == ModelState::kReady) {
        names.push_back(name);
        break;
      }
    }
  }
  return names;
}

LifecycleReport ModelManager::Report() const {
  LifecycleReport report;
  report.resident_bytes = ResidentBytes();
  MutexLock lock(&mu_);
  report.counters = counters_;
  std::map<std::string, bool> devices = {{"cpu", true}};
  const TimePoint now = options_.time->Now();
  for (const auto& [name, entry] : models_) {
    if (!entry.config) continue;
    const std::string device = DeviceOf(entry);
    devices[device] = true;
    for (const auto& [version, v] : entry.versions) {
      VersionMemory row;
      row.name = name;
      row.version = version;
      row.device = device;
      row.state = v.state;
      row.memory_bytes = v.memory_bytes;
      row.rss_growth_bytes = v.rss_growth_bytes;
      row.pinned = entry.config->lifecycle.pin;
      row.last_load_ms = v.last_load_ms;
      row.loads = v.loads;
      row.reloads = v.reloads;
      row.evictions = v.evictions;
      row.requests = v.usage->requests();
      if (v.state == ModelState::kReady) {
        row.idle_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - v.usage->last_used())
                .count();
        row.shared_weights = v.handle->backend_model().use_count() > 1;
      }
      report.versions.push_back(std::move(row));
    }
  }
  const std::vector<VersionFootprint> footprints = Footprints();
  for (const auto& [device, unused] : devices) {
    report.devices.push_back(
        {device, resources_.BudgetBytes(device), ResourceTracker::UsedBytes(device, footprints)});
  }
  return report;
}

void ModelManager::StopAll() {
  std::vector<ModelHandle> handles;
  Callbacks callbacks;
  watcher_.reset();
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    work_.NotifyAll();
  }
  if (loader_.joinable()) loader_.join();
  if (housekeeping_.joinable()) housekeeping_.join();
  {
    MutexLock lock(&mu_);
    // Loads that never ran: their callers (a blocked Load(), an HTTP load call) are told.
    for (LoadJob& job : jobs_) {
      if (job.group && job.group->pending > 0) {
        job.group->pending = 0;
        callbacks.push_back([group = job.group] {
          group->done(absl::UnavailableError("the server is shutting down"));
        });
      }
    }
    jobs_.clear();
    handles.swap(graveyard_);
    for (auto& [name, entry] : models_) {
      for (auto& [version, v] : entry.versions) {
        if (v.handle) handles.push_back(v.handle);
        v.waiters.Fail(absl::StatusCode::kUnavailable, "the server is shutting down", &callbacks);
      }
    }
  }
  for (auto& callback : callbacks) callback();
  for (const ModelHandle& handle : handles) handle->Stop();
}

}  // namespace inferd
