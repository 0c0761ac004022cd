// The Prometheus series of one tenant, created at start-up for each tenant of the key file.
// Like ModelMetrics, the hot path touches only metric objects it already holds.
// Thread-safety: thread-safe (prometheus-cpp metrics are).
#ifndef INFERD_OBSERVABILITY_TENANT_METRICS_H_
#define INFERD_OBSERVABILITY_TENANT_METRICS_H_

#include <array>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include "auth/tenant.h"
#include "observability/request_outcome.h"

namespace inferd {

struct MetricFamilies;  // observability/metrics_registry.h

class TenantMetrics : public TenantObserver {
 public:
  // Adds this tenant's series to `families`, which must outlive it.
  TenantMetrics(MetricFamilies& families, std::string_view tenant);

  void OnRejected(TenantRejection reason) override;
  void OnFinished(absl::StatusCode code, Duration latency) override;

 private:
  std::array<prometheus::Counter*, kRequestOutcomeCount> requests_{};
  std::array<prometheus::Counter*, 3> rejections_{};
  prometheus::Histogram* request_seconds_;
};

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_TENANT_METRICS_H_
