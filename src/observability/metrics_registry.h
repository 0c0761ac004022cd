// inferd's Prometheus metrics: the registry, every metric family, the per-model series
// (ModelMetrics, through ModelObserverFactory), the calls that memory management and model
// lifecycle make, and the text exposition that GET /metrics serves.
//
// Names follow Prometheus conventions: base units in the name (_seconds, _bytes), _total
// on counters, and label sets bounded by the repository (model, version, device, outcome)
// or by the few HTTP statuses inferd sends. Gauges that mirror state elsewhere (queue depth,
// model readiness, process CPU and memory) are refreshed at scrape time, so the hot path
// pays nothing for them.
//
// Thread-safety: all methods are thread-safe.
#ifndef INFERD_OBSERVABILITY_METRICS_REGISTRY_H_
#define INFERD_OBSERVABILITY_METRICS_REGISTRY_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "absl/base/thread_annotations.h"
#include "auth/tenant.h"

#include "common/mutex.h"
#include "core/repository/model_manager.h"
#include "core/scheduling/model_observer.h"

namespace inferd {

// Latency buckets in seconds: 0.5 ms .. 10 s, dense around the 100 ms P99 target.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets();
// Batch sizes in rows: powers of two up to 256.
const prometheus::Histogram::BucketBoundaries& BatchSizeBuckets();

// Every family, owned by the registry.
struct MetricFamilies {
  prometheus::Family<prometheus::Counter>* requests;
  prometheus::Family<prometheus::Counter>* inferences;
  prometheus::Family<prometheus::Histogram>* request_seconds;
  prometheus::Family<prometheus::Histogram>* queue_seconds;
  prometheus::Family<prometheus::Histogram>* compute_seconds;
  prometheus::Family<prometheus::Histogram>* batch_rows;
  prometheus::Family<prometheus::Gauge>* queue_depth;
  prometheus::Family<prometheus::Gauge>* model_ready;
  prometheus::Family<prometheus::Gauge>* model_load_seconds;
  prometheus::Family<prometheus::Counter>* model_load_failures;
  prometheus::Family<prometheus::Gauge>* model_memory_bytes;
  prometheus::Family<prometheus::Gauge>* device_budget_bytes;
  prometheus::Family<prometheus::Gauge>* device_used_bytes;
  prometheus::Family<prometheus::Counter>* evictions;
  prometheus::Family<prometheus::Counter>* reloads;
  prometheus::Family<prometheus::Counter>* http_responses;
  prometheus::Family<prometheus::Gauge>* http_in_flight;
  prometheus::Family<prometheus::Gauge>* build_info;
  prometheus::Family<prometheus::Counter>* process_cpu;
  prometheus::Family<prometheus::Gauge>* process_resident;
  prometheus::Family<prometheus::Gauge>* process_virtual;
  prometheus::Family<prometheus::Gauge>* process_start;
  prometheus::Family<prometheus::Gauge>* process_fds;
  prometheus::Family<prometheus::Gauge>* process_threads;
  prometheus::Family<prometheus::Counter>* log_dropped;
  prometheus::Family<prometheus::Counter>* tenant_requests;
  prometheus::Family<prometheus::Histogram>* tenant_request_seconds;
  prometheus::Family<prometheus::Counter>* tenant_rejections;
  prometheus::Family<prometheus::Counter>* cache_lookups;
  prometheus::Family<prometheus::Gauge>* cache_bytes;
  prometheus::Family<prometheus::Gauge>* cache_entries;
};

class MetricsRegistry : public ModelObserverFactory {
 public:
  explicit MetricsRegistry(std::string_view server_version);

  // --- ModelObserverFactory: called by ModelManager around every load.
  std::shared_ptr<ModelObserver> ForModel(std::string_view name, int64_t version) override;
  void OnModelLoadFinished(std::string_view name, std::optional<int64_t> version, Duration duration,
                           const absl::Status& status) override;

  // --- Memory and lifecycle (for the memory budget / eviction code). `device` is "cpu",
  // "cuda:0", ...
  void SetModelMemoryBytes(std::string_view model, int64_t version, std::string_view device,
                           int64_t bytes);
  // The version left the device (unloaded or evicted): its series disappears.
  void RemoveModelMemory(std::string_view model, int64_t version, std::string_view device);
  void SetDeviceMemoryBudgetBytes(std::string_view device, int64_t bytes);
  void SetDeviceMemoryUsedBytes(std::string_view device, int64_t bytes);
  void CountEviction(std::string_view model, int64_t version);
  void CountReload(std::string_view model, int64_t version);

  // --- Tenants (auth/tenant.h): requests by outcome, latency and rejections by reason,
  // labelled with the tenant's name (bounded by the key file).
  std::unique_ptr<TenantObserver> ForTenant(std::string_view tenant);

  // --- HTTP, per request (no lookups: counters for the statuses inferd sends exist
  // from the start).
  void HttpRequestStarted();
  void HttpRequestFinished(unsigned status);

  // Refreshes the scrape-time gauges from `models` (may be null) and /proc, then collects.
  std::vector<prometheus::MetricFamily> Collect(const ModelManager* models);
  // The Prometheus text exposition format (version 0.0.4).
  std::string ScrapeText(const ModelManager* models);

 private:
  prometheus::Counter& HttpResponses(unsigned status);
  void RefreshProcess() ABSL_EXCLUSIVE_LOCKS_REQUIRED(collect_mu_);
  void RefreshModels(const ModelManager& models) ABSL_EXCLUSIVE_LOCKS_REQUIRED(collect_mu_);

  std::shared_ptr<prometheus::Registry> registry_;
  MetricFamilies families_;
  std::map<unsigned, prometheus::Counter*> http_responses_;  // immutable after construction
  prometheus::Gauge* http_in_flight_;
  prometheus::Counter* process_cpu_;
  Mutex collect_mu_;  // one refresh + collect at a time
  double process_cpu_reported_ ABSL_GUARDED_BY(collect_mu_) = 0;
  prometheus::Counter* log_dropped_;
  uint64_t log_dropped_reported_ ABSL_GUARDED_BY(collect_mu_) = 0;
  struct LifecycleCounts {
    uint64_t evictions = 0;
    uint64_t reloads = 0;
  };
  std::map<std::pair<std::string, int64_t>, LifecycleCounts> lifecycle_reported_
      ABSL_GUARDED_BY(collect_mu_);
};

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_METRICS_REGISTRY_H_
