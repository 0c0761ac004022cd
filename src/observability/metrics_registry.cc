#include "observability/metrics_registry.h"

#include <chrono>
#include <utility>

#include <prometheus/text_serializer.h>

#include "observability/log_setup.h"
#include "observability/model_metrics.h"
#include "observability/process_metrics.h"
#include "observability/tenant_metrics.h"

namespace inferd {
namespace {

// The statuses inferd's HTTP frontend sends (docs/http-api.md); others are added on first use.
constexpr unsigned kKnownHttpStatuses[] = {200, 400, 401, 403, 404, 405,
                                           413, 429, 500, 501, 503, 504};

template <typename Builder>
auto& Build(Builder builder, prometheus::Registry& registry, const std::string& name,
            const std::string& help) {
  return builder.Name(name).Help(help).Register(registry);
}

prometheus::Labels ModelLabels(std::string_view model, int64_t version) {
  return {{"model", std::string(model)}, {"version", std::to_string(version)}};
}

}  // namespace

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10};
  return *buckets;
}

const prometheus::Histogram::BucketBoundaries& BatchSizeBuckets() {
  static const auto* buckets =
      new prometheus::Histogram::BucketBoundaries{1, 2, 4, 8, 16, 32, 64, 128, 256};
  return *buckets;
}

MetricsRegistry::MetricsRegistry(std::string_view server_version)
    : registry_(std::make_shared<prometheus::Registry>()) {
  using prometheus::BuildCounter;
  using prometheus::BuildGauge;
  using prometheus::BuildHistogram;
  prometheus::Registry& r = *registry_;
  MetricFamilies& f = families_;
  f.requests = &Build(BuildCounter(), r, "inferd_requests_total",
                      "Inference requests answered, by model, version and outcome (success, "
                      "rejected, timeout, bad_input, backend_error).");
  f.inferences = &Build(BuildCounter(), r, "inferd_inferences_total",
                        "Rows (batch items) the engine ran, by model and version.");
  f.request_seconds = &Build(BuildHistogram(), r, "inferd_request_duration_seconds",
                             "Time from a request's arrival to its reply.");
  f.queue_seconds = &Build(BuildHistogram(), r, "inferd_queue_duration_seconds",
                           "Time requests waited in the model's queue before executing.");
  f.compute_seconds = &Build(BuildHistogram(), r, "inferd_compute_duration_seconds",
                             "Time of one engine call (gather inputs, run, scatter outputs).");
  f.batch_rows = &Build(BuildHistogram(), r, "inferd_batch_size_rows",
                        "Rows per engine call (the batch size).");
  f.queue_depth =
      &Build(BuildGauge(), r, "inferd_queue_depth", "Requests waiting in the model's queue.");
  f.model_ready = &Build(BuildGauge(), r, "inferd_model_ready",
                         "1 when the model version is ready, 0 when it is unavailable.");
  f.model_load_seconds = &Build(BuildGauge(), r, "inferd_model_load_duration_seconds",
                                "How long the last load of the model version took (engine "
                                "load, warm-up and auto-tuning).");
  f.model_load_failures =
      &Build(BuildCounter(), r, "inferd_model_load_failures_total", "Model loads that failed.");
  f.model_memory_bytes = &Build(BuildGauge(), r, "inferd_model_memory_bytes",
                                "Memory a loaded model version takes on a device.");
  f.device_budget_bytes = &Build(BuildGauge(), r, "inferd_device_memory_budget_bytes",
                                 "The memory budget for models on a device.");
  f.device_used_bytes = &Build(BuildGauge(), r, "inferd_device_memory_used_bytes",
                               "Memory the loaded models take on a device.");
  f.evictions = &Build(BuildCounter(), r, "inferd_model_evictions_total",
                       "Model versions unloaded to make room under a memory budget.");
  f.reloads = &Build(BuildCounter(), r, "inferd_model_reloads_total",
                     "Model versions loaded again after an eviction or a change on disk.");
  f.http_responses = &Build(BuildCounter(), r, "inferd_http_responses_total",
                            "HTTP responses sent, by status code (every endpoint).");
  f.http_in_flight = &Build(BuildGauge(), r, "inferd_http_requests_in_flight",
                            "HTTP requests read and not yet answered.");
  f.build_info = &Build(BuildGauge(), r, "inferd_build_info", "Always 1; labels say the build.");
  f.process_cpu = &Build(BuildCounter(), r, "process_cpu_seconds_total",
                         "Total user and system CPU time spent in seconds.");
  f.process_resident =
      &Build(BuildGauge(), r, "process_resident_memory_bytes", "Resident memory size in bytes.");
  f.process_virtual =
      &Build(BuildGauge(), r, "process_virtual_memory_bytes", "Virtual memory size in bytes.");
  f.process_start = &Build(BuildGauge(), r, "process_start_time_seconds",
                           "Start time of the process since unix epoch in seconds.");
  f.process_fds = &Build(BuildGauge(), r, "process_open_fds", "Number of open file descriptors.");
  f.process_threads = &Build(BuildGauge(), r, "process_threads", "Number of OS threads.");
  f.log_dropped = &Build(BuildCounter(), r, "inferd_log_messages_dropped_total",
                         "Access log lines dropped because the log writer fell behind.");

  f.tenant_requests = &Build(BuildCounter(), r, "inferd_tenant_requests_total",
                             "Requests of an API key's tenant that were admitted, by tenant and "
                             "outcome (as inferd_requests_total).");
  f.tenant_request_seconds = &Build(BuildHistogram(), r, "inferd_tenant_request_duration_seconds",
                                    "Time from a tenant's request's admission to its reply.");
  f.tenant_rejections = &Build(BuildCounter(), r, "inferd_tenant_rejections_total",
                               "Requests of a tenant refused before they ran, by reason "
                               "(rate_limit, in_flight_limit, model_not_allowed).");

  f.cache_lookups = &Build(BuildCounter(), r, "inferd_response_cache_lookups_total",
                           "Response cache lookups of a model version, by result (hit, miss).");
  f.cache_bytes = &Build(BuildGauge(), r, "inferd_response_cache_bytes",
                         "Bytes the model version's response cache holds (its entries' charge).");
  f.cache_entries = &Build(BuildGauge(), r, "inferd_response_cache_entries",
                           "Answers the model version's response cache holds.");

  f.build_info->Add({{"version", std::string(server_version)}}).Set(1);
  for (unsigned status : kKnownHttpStatuses) {
    http_responses_[status] = &f.http_responses->Add({{"code", std::to_string(status)}});
  }
  http_in_flight_ = &f.http_in_flight->Add({});
  process_cpu_ = &f.process_cpu->Add({});
  log_dropped_ = &f.log_dropped->Add({});
}

std::unique_ptr<TenantObserver> MetricsRegistry::ForTenant(std::string_view tenant) {
  return std::make_unique<TenantMetrics>(families_, tenant);
}

std::shared_ptr<ModelObserver> MetricsRegistry::ForModel(std::string_view name, int64_t version) {
  return std::make_shared<ModelMetrics>(families_, ModelLabels(name, version));
}

void MetricsRegistry::OnModelLoadFinished(std::string_view name, std::optional<int64_t> version,
                                          Duration duration, const absl::Status& status) {
  if (!status.ok()) {
    families_.model_load_failures->Add({{"model", std::string(name)}}).Increment();
    return;
  }
  if (version) {
    families_.model_load_seconds->Add(ModelLabels(name, *version))
        .Set(std::chrono::duration<double>(duration).count());
  }
}

void MetricsRegistry::SetModelMemoryBytes(std::string_view model, int64_t version,
                                          std::string_view device, int64_t bytes) {
  prometheus::Labels labels = ModelLabels(model, version);
  labels["device"] = std::string(device);
  families_.model_memory_bytes->Add(labels).Set(static_cast<double>(bytes));
}

void MetricsRegistry::RemoveModelMemory(std::string_view model, int64_t version,
                                        std::string_view device) {
  prometheus::Labels labels = ModelLabels(model, version);
  labels["device"] = std::string(device);
  prometheus::Family<prometheus::Gauge>& family = *families_.model_memory_bytes;
  if (family.Has(labels)) family.Remove(&family.Add(labels));
}

void MetricsRegistry::SetDeviceMemoryBudgetBytes(std::string_view device, int64_t bytes) {
  families_.device_budget_bytes->Add({{"device", std::string(device)}})
      .Set(static_cast<double>(bytes));
}

void MetricsRegistry::SetDeviceMemoryUsedBytes(std::string_view device, int64_t bytes) {
  families_.device_used_bytes->Add({{"device", std::string(device)}})
      .Set(static_cast<double>(bytes));
}

void MetricsRegistry::CountEviction(std::string_view model, int64_t version) {
  families_.evictions->Add(ModelLabels(model, version)).Increment();
}

void MetricsRegistry::CountReload(std::string_view model, int64_t version) {
  families_.reloads->Add(ModelLabels(model, version)).Increment();
}

void MetricsRegistry::HttpRequestStarted() { http_in_flight_->Increment(); }

void MetricsRegistry::HttpRequestFinished(unsigned status) {
  http_in_flight_->Decrement();
  HttpResponses(status).Increment();
}

prometheus::Counter& MetricsRegistry::HttpResponses(unsigned status) {
  auto known = http_responses_.find(status);
  if (known != http_responses_.end()) return *known->second;
  // A status inferd does not normally send: the family's own lock makes this safe.
  return families_.http_responses->Add({{"code", std::to_string(status)}});
}

void MetricsRegistry::RefreshProcess() {
  const uint64_t dropped = AccessLogLinesDropped();
  if (dropped > log_dropped_reported_) {
    log_dropped_->Increment(static_cast<double>(dropped - log_dropped_reported_));
    log_dropped_reported_ = dropped;
  }
  absl::StatusOr<ProcessSample> sample = SampleThisProcess();
  if (!sample.ok()) return;
  if (sample->cpu_seconds > process_cpu_reported_) {
    process_cpu_->Increment(sample->cpu_seconds - process_cpu_reported_);
    process_cpu_reported_ = sample->cpu_seconds;
  }
  families_.process_resident->Add({}).Set(static_cast<double>(sample->resident_bytes));
  families_.process_virtual->Add({}).Set(static_cast<double>(sample->virtual_bytes));
  families_.process_start->Add({}).Set(sample->start_time_seconds);
  families_.process_fds->Add({}).Set(static_cast<double>(sample->open_fds));
  families_.process_threads->Add({}).Set(static_cast<double>(sample->threads));
}

void MetricsRegistry::RefreshModels(const ModelManager& models) {
  for (const ModelStatus& status : models.Index()) {
    const std::string version = status.version ? std::to_string(*status.version) : "";
    const prometheus::Labels labels = {{"model", status.name}, {"version", version}};
    prometheus::Family<prometheus::Gauge>& ready = *families_.model_ready;
    if (status.state == ModelState::kUnloaded) {
      // Lazy, evicted or idle: not failed (it loads on its next request), so no 0 that the
      // load-failure alert would take for a broken model.
      if (ready.Has(labels)) ready.Remove(&ready.Add(labels));
      continue;
    }
    ready.Add(labels).Set(status.state == ModelState::kReady ? 1 : 0);
  }
  for (const ModelHandle& model : models.ReadyModels()) {
    if (auto* metrics = dynamic_cast<ModelMetrics*>(model->observer())) {
      metrics->SetQueueDepth(model->queue_depth());
    }
    if (const ResponseCache* cache = model->response_cache()) {
      const ResponseCacheStats held = cache->Stats();
      const prometheus::Labels labels = {{"model", model->name()},
                                         {"version", std::to_string(model->version())}};
      families_.cache_bytes->Add(labels).Set(static_cast<double>(held.bytes));
      families_.cache_entries->Add(labels).Set(static_cast<double>(held.entries));
    }
  }
  // Memory and lifecycle events, read from the manager's report at scrape time: the
  // lifecycle code stays free of metrics calls, and nothing is counted on the request path.
  const LifecycleReport report = models.Report();
  for (const DeviceMemory& device : report.devices) {
    SetDeviceMemoryBudgetBytes(device.device, static_cast<int64_t>(device.budget_bytes));
    SetDeviceMemoryUsedBytes(device.device, static_cast<int64_t>(device.used_bytes));
  }
  for (const VersionMemory& v : report.versions) {
    if (v.state == ModelState::kReady) {
      SetModelMemoryBytes(v.name, v.version, v.device, static_cast<int64_t>(v.memory_bytes));
    } else {
      RemoveModelMemory(v.name, v.version, v.device);
    }
    // The manager's per-version counts only grow; the counters follow them.
    LifecycleCounts& reported = lifecycle_reported_[{v.name, v.version}];
    for (uint64_t i = reported.evictions; i < v.evictions; ++i) CountEviction(v.name, v.version);
    for (uint64_t i = reported.reloads; i < v.reloads; ++i) CountReload(v.name, v.version);
    reported = {v.evictions, v.reloads};
  }
}

std::vector<prometheus::MetricFamily> MetricsRegistry::Collect(const ModelManager* models) {
  MutexLock lock(&collect_mu_);
  RefreshProcess();
  if (models != nullptr) RefreshModels(*models);
  return registry_->Collect();
}

std::string MetricsRegistry::ScrapeText(const ModelManager* models) {
  return prometheus::TextSerializer().Serialize(Collect(models));
}

}  // namespace inferd
