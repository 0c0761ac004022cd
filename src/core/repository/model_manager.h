// Owns every model of a repository and each model's lifecycle per version:
// UNLOADED -> LOADING -> READY -> UNLOADED (evicted, idle, unloaded), or UNAVAILABLE.
//
// - Versions: config.yaml's version_policy picks the served versions; a request names one
//   or gets the highest ready one (or one chosen by the model's traffic weights).
// - Control: every model in the repository loaded at start (kLoadAll), only --load-model and
//   the load API (kExplicit), or kLoadAll plus reacting to repository changes (kWatch).
// - Zero downtime: a new version (or a new config) is loaded and warmed while the old one
//   keeps serving, then published; the old one is dropped afterwards. A request holds a
//   ModelHandle, so it finishes on the version it started on. A failed load leaves what is
//   served untouched and shows its reason in Index().
// - Memory: each device has a budget; a load that would exceed it first evicts idle,
//   unpinned models, least recently used first; evicted and lazy models load again on their
//   next request. Identical model files (same SHA-256) share one engine model and count once.
//
// Loads run one at a time on the manager's loader thread (never on an I/O thread): requests
// for a model that is not loaded wait in the manager and are answered through their
// callback when the load ends or their timeout passes.
//
// Thread-safety: all public methods are thread-safe. No lock is held across a load, an
// engine call or a callback. Requests for a READY version (Acquire, AcquireForInference,
// ConfigOf, ResolveLabel) read an immutable serving snapshot (serving_snapshot.h) and never
// wait for the manager's lock, which loads, reports and the repository API take.
#ifndef INFERD_CORE_REPOSITORY_MODEL_MANAGER_H_
#define INFERD_CORE_REPOSITORY_MODEL_MANAGER_H_

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "core/backend/backend.h"
#include "core/config/traffic_rules.h"
#include "core/model/served_model.h"
#include "core/repository/lifecycle_report.h"
#include "core/repository/load_waiters.h"
#include "core/repository/model_folder.h"
#include "core/repository/resource_tracker.h"
#include "core/repository/serving_snapshot.h"
#include "core/scheduling/model_observer.h"
#include "core/types/version_key.h"

namespace inferd {

// NotFound for a model the repository does not have, marked kUnknownModel
// (common/error_detail.h) so that protocols with a code for it (OpenAI's model_not_found)
// can say so.
absl::Status UnknownModelError(std::string_view name);

class RepositoryWatcher;

// kLoadAll is --model-control none, the default: every model in the repository loads at start.
// kExplicit: only --load-model and the load API. kWatch: as kLoadAll, then repository changes.
enum class ModelControl { kLoadAll, kExplicit, kWatch };

struct ModelManagerOptions {
  ConfigDefaults defaults;
  ModelControl control = ModelControl::kLoadAll;
  std::vector<std::string> load_models;  // kExplicit: loaded at start
  bool lazy_all = false;                 // every model loads on its first request
  // Explicit budgets by device ("cpu"); others get DefaultBudgetBytes().
  std::map<std::string, uint64_t, std::less<>> memory_budgets;
  // kWatch: how often the repository is scanned when no change notification arrives, and how
  // long a version folder's files must stay unchanged before it is loaded.
  Duration watch_interval = std::chrono::seconds(1);
  Duration settle_interval = std::chrono::seconds(2);
  const TimeSource* time = RealTime();
  // Told about every load and every loaded version's traffic, for metrics; optional, must
  // outlive the manager.
  ModelObserverFactory* observers = nullptr;
  // Execution instances (threads with their own engine state) of every loaded version
  // together: a load that would pass it fails with a reason instead of starting them.
  int max_total_instances = 1024;
};

class ModelManager {
 public:
  using AcquireCallback = LoadWaiters::Callback;
  using DoneCallback = std::function<void(absl::Status)>;

  // `backends` are the engines this build has, looked up by config.yaml's `backend`.
  // `observers` (optional, must outlive the manager) is told about every load, for metrics.
  ModelManager(std::filesystem::path repository, std::vector<std::unique_ptr<Backend>> backends,
               ModelManagerOptions options = {});
  ~ModelManager();

  // Scans the repository and loads what the control mode asks for (lazy models excepted),
  // waiting for those loads. Fails only when the repository itself cannot be read, or when
  // a --load-model name is not in it; per-model failures are recorded in Index().
  absl::Status LoadAll();

  // Unavailable, with the reason Acquire gives, when no version of `name` (or `version`) is
  // READY and the one a request would reach failed to load (UNAVAILABLE): a request for it is
  // answered with that, whatever it holds. OK otherwise (ready, or loadable on demand). Loads
  // nothing.
  absl::Status FailedToLoad(std::string_view name, std::optional<int64_t> version) const;

  // A handle on a READY version, without loading anything (metadata, readiness, stats).
  // NotFound: no such model or version. Unavailable: not loaded, or failed to load.
  absl::StatusOr<ModelHandle> Acquire(std::string_view name,
                                      std::optional<int64_t> version = std::nullopt) const;

  // A handle for an inference request: the named version, or the one the traffic rules
  // pick, or the highest ready one. A model that is not loaded but may be (lazy, evicted,
  // idle-unloaded) is loaded first; `done` runs when it is ready, when its load fails, or
  // after `timeout_us` (0: no limit) with DeadlineExceeded. `done` may run before this
  // returns, on this thread; otherwise on the loader or housekeeping thread.
  void AcquireForInference(std::string_view name, std::optional<int64_t> version,
                           int64_t timeout_us, AcquireCallback done);

  // The version a label of `name` points at.
  absl::StatusOr<int64_t> ResolveLabel(std::string_view name, std::string_view label) const;

  // Repository API. Load re-reads the model's folder and config.yaml and loads the versions
  // its policy wants (a changed config replaces the served versions without downtime);
  // Unload stops serving it until the next Load. Both block until done: call them off the
  // I/O threads (LoadAsync answers through a callback instead).
  absl::Status Load(std::string_view name);
  void LoadAsync(std::string_view name, DoneCallback done);
  absl::Status Unload(std::string_view name);

  // Replaces a model's labels and traffic weights; every label and weight must name a
  // READY version (InvalidArgument otherwise, and the rules in force stay).
  absl::Status SetTrafficRules(std::string_view name, TrafficRules rules);
  absl::StatusOr<TrafficRules> GetTrafficRules(std::string_view name) const;

  // A model's config and its ready versions, whether or not one is loaded now.
  struct Description {
    std::shared_ptr<const ModelConfig> config;
    std::string platform;
    std::vector<int64_t> served_versions;  // chosen by the version policy
    std::vector<int64_t> ready_versions;
  };
  absl::StatusOr<Description> Describe(std::string_view name) const;
  // Just the config (cheap, for the request path). NotFound: unknown model; Unavailable:
  // its config is unusable.
  absl::StatusOr<std::shared_ptr<const ModelConfig>> ConfigOf(std::string_view name) const;

  // One row per model version (one per model when no version could be determined).
  std::vector<ModelStatus> Index() const;
  // Budgets, memory in use and lifecycle counters (for stats, logs and metrics).
  LifecycleReport Report() const;

  // Every ready version, sorted by name then version.
  std::vector<ModelHandle> ReadyModels() const;
  // Names of the models that have a ready version, sorted.
  std::vector<std::string> ReadyModelNames() const;

  // Stops the loader, the watcher and every model's scheduler after its queued requests.
  void StopAll();

  // One housekeeping pass, as the housekeeping thread makes every 50 ms: answers requests
  // whose wait for a load passed their timeout, unloads versions idle for their
  // idle_unload_s, and releases dropped models. Times are the options' time source, so a
  // test advances a fake one and calls this instead of sleeping.
  void Housekeep();

  // kWatch: re-reads one model folder whose version folders `stable` have settled (the
  // watcher calls this); a model folder that disappeared is unloaded.
  void OnRepositoryChange(const std::string& name, const std::vector<int64_t>& stable);

 private:
  // Everything below is guarded by mu_ unless it says otherwise. The work is split by job:
  //   model_manager.cc               requests (the serving snapshot first), traffic rules,
  //                                  descriptions, reports, shutdown
  //   model_manager_repository.cc    start-up, Load/Unload, applying what a folder holds
  //   model_manager_loader.cc        the loader thread: one load, step by step; eviction
  //   model_manager_housekeeping.cc  timeouts, idle unloads, unloading and releasing
  // Reading a folder is model_folder.h's, the memory budget resource_tracker.h's and the
  // requests waiting for a load load_waiters.h's.
  struct VersionEntry {
    ModelState state = ModelState::kUnloaded;
    std::string reason;
    ModelHandle handle;
    uint64_t memory_bytes = 0;    // counted against the budget while READY
    uint64_t reserved_bytes = 0;  // counted while LOADING
    uint64_t rss_growth_bytes = 0;
    std::string sha256;
    double last_load_ms = 0;
    uint64_t loads = 0, reloads = 0, evictions = 0;
    // Requests and last use, shared with the serving snapshots that name this version
    // (requests update it without mu_).
    std::shared_ptr<VersionUsage> usage = std::make_shared<VersionUsage>();
    bool evicted = false;  // the next load is a reload
    LoadWaiters waiters;
  };
  struct ModelEntry {
    std::filesystem::path dir;
    absl::Status config_status;  // why the folder cannot be served
    std::string config_text;
    std::shared_ptr<const ModelConfig> config;
    Backend* backend = nullptr;
    std::vector<int64_t> wanted;  // what the version policy serves, ascending
    bool requested = true;        // false: unloaded by the API or not loaded yet (explicit)
    bool lazy = false;
    TrafficRules traffic;
    std::map<int64_t, VersionEntry> versions;
  };
  // Loads started together (one Load call, one Reconcile) and the callback for when they
  // end. Guarded by mu_.
  struct JobGroup {
    int pending = 0;
    absl::Status first_error;
    DoneCallback done;
  };
  struct LoadJob {
    std::string name;
    int64_t version = 0;
    bool replace = false;  // reload a READY version (new config) while it keeps serving
    std::shared_ptr<JobGroup> group;
  };
  // What one load works from, gathered step by step (model_manager_loader.cc).
  struct LoadPlan;
  struct LoadedVersion;
  using Callbacks = LoadWaiters::Answers;

  // --- model_manager_repository.cc
  // Re-reads `name`'s folder; queues loads of wanted versions (all of them when `force`,
  // else unless lazy) and calls `done` when they end. `stable`: kWatch's settled versions.
  void Reconcile(const std::string& name, bool force, const std::vector<int64_t>* stable,
                 DoneCallback done);
  // Makes what was read `entry`'s config and wanted versions.
  void ApplyModelFolder(const std::string& name, ModelEntry& entry, ModelFolder folder)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(folders_mu_, mu_);

  // --- model_manager.cc
  // The snapshot in force (never null).
  std::shared_ptr<const ServingSnapshot> Snapshot() const ABSL_LOCKS_EXCLUDED(snapshot_mu_);
  // A READY version for `name` from the snapshot, without mu_: the one an inference request
  // gets (traffic weights, its request counted) when `inference`, else the one Acquire
  // returns. Null when the snapshot cannot answer; the caller then takes mu_.
  ModelHandle ServeFromSnapshot(std::string_view name, std::optional<int64_t> version,
                                bool inference) const;
  // Makes what models_ serves now the snapshot requests read. Called before mu_ is released
  // by every change to a model's config, config status, traffic rules or READY versions.
  void PublishSnapshot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(snapshot_mu_);
  // Picks the version for a request; NotFound/Unavailable when there is none.
  absl::StatusOr<int64_t> ChooseVersion(std::string_view name, const ModelEntry& entry,
                                        std::optional<int64_t> version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- model_manager_loader.cc
  void Enqueue(LoadJob job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LoaderLoop();
  // One load, in the steps below; no lock is held while a file is read or a model loads.
  void RunLoadJob(const LoadJob& job);
  // Step 1 (mu_): what the model's entry says about the version to load.
  LoadPlan PlanLoad(const LoadJob& job) ABSL_LOCKS_EXCLUDED(mu_);
  // Step 2 (no lock): the file's SHA-256 against config.yaml's, and the memory estimate.
  static absl::Status CheckModelFile(LoadPlan& plan);
  // Step 3 (mu_): the instance cap, shared weights, and room in the budget (evicting idle
  // models into `dropped`), reserved for the load.
  absl::Status ReserveMemory(LoadPlan& plan, std::vector<ModelHandle>* dropped)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Step 4 (no lock): the engine load and warm-up.
  absl::Status LoadEngine(const LoadPlan& plan, LoadedVersion* loaded) const;
  // Step 5 (mu_): makes the loaded version READY and answers its waiters, unless it was
  // unloaded meanwhile or its measured size does not fit (returned).
  absl::Status PublishLoaded(const LoadJob& job, const LoadPlan& plan, LoadedVersion loaded,
                             std::vector<ModelHandle>* dropped, Callbacks* callbacks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Step 5, when the load failed: the version's state and reason, its waiters answered.
  void RecordLoadFailure(const LoadJob& job, const absl::Status& failure, Callbacks* callbacks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Step 5: the job's group learns its outcome; the last job of a group answers it.
  void FinishJobGroup(const LoadJob& job, const absl::Status& failure, Callbacks* callbacks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts idle unpinned models of `device` until `needed` more bytes fit for `loading` (whose
  // own model's versions are never evicted); their handles go to `dropped` (released by the
  // caller, outside the lock).
  absl::Status MakeRoom(const std::string& device, uint64_t needed, const VersionKey& loading,
                        std::vector<ModelHandle>* dropped) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every version as the resource tracker counts it.
  std::vector<VersionFootprint> Footprints() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ResourceExhausted when loading `config` for (name, version) would run more execution
  // instances in this process than options_.max_total_instances (the version's current
  // instances, replaced by the load, are not counted).
  absl::Status CheckInstanceCap(const std::string& name, int64_t version,
                                const ModelConfig& config) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<BackendModel> FindSharedWeights(const std::string& sha256,
                                                  const ModelEntry& entry) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static std::string DeviceOf(const ModelEntry& entry);
  // A copy that shares no reference count with `status`: the loader thread drops its own
  // copies while the caller reads this one, and Debian's Abseil (not built for
  // ThreadSanitizer) hides its atomic reference counting from TSan.
  static absl::Status Detached(const absl::Status& status);

  // --- model_manager_housekeeping.cc
  void HousekeepingLoop();
  // Stops serving one version: its handle goes to `dropped`, waiters get `why`.
  void UnloadVersion(const std::string& name, int64_t version, VersionEntry& entry,
                     ModelState state, const std::string& reason, std::vector<ModelHandle>* dropped,
                     Callbacks* callbacks) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a load: unloads READY versions the policy no longer wants.
  void DropUnwanted(const std::string& name, ModelEntry& entry, std::vector<ModelHandle>* dropped,
                    Callbacks* callbacks) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Releases dropped models and returns their memory to the kernel.
  static void Release(std::vector<ModelHandle>* dropped);
  // Hands dropped models to the housekeeping thread to release: the caller may be an I/O
  // thread, and a model's last release waits for its queued requests.
  void ReleaseLater(std::vector<ModelHandle>* dropped) ABSL_LOCKS_EXCLUDED(mu_);

  const std::filesystem::path repository_;
  const std::vector<std::unique_ptr<Backend>> backends_;
  const ModelManagerOptions options_;
  const ResourceTracker resources_;  // budgets from options_

  // Held while a folder is read and applied (Reconcile, LoadAll), so that an older read of a
  // folder never replaces a newer one; the file-system work happens under it, not under mu_.
  Mutex folders_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable Mutex mu_;
  CondVar work_;
  std::map<std::string, ModelEntry, std::less<>> models_ ABSL_GUARDED_BY(mu_);
  std::deque<LoadJob> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool scanned_ ABSL_GUARDED_BY(mu_) = false;
  LifecycleCounters counters_ ABSL_GUARDED_BY(mu_);
  std::vector<ModelHandle> graveyard_ ABSL_GUARDED_BY(mu_);  // see ReleaseLater

  // Guards only the pointer: readers copy it, PublishSnapshot (under mu_) replaces it.
  mutable Mutex snapshot_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::shared_ptr<const ServingSnapshot> snapshot_ ABSL_GUARDED_BY(snapshot_mu_) =
      std::make_shared<const ServingSnapshot>();

  std::thread loader_;
  std::thread housekeeping_;
  std::unique_ptr<RepositoryWatcher> watcher_;
};

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_MODEL_MANAGER_H_
