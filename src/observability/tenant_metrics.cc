#include "observability/tenant_metrics.h"

#include <chrono>
#include <string>

#include "observability/metrics_registry.h"

namespace inferd {

TenantMetrics::TenantMetrics(MetricFamilies& families, std::string_view tenant) {
  const std::string name(tenant);
  for (RequestOutcome outcome : kAllRequestOutcomes) {
    requests_[static_cast<size_t>(outcome)] = &families.tenant_requests->Add(
        {{"tenant", name}, {"outcome", std::string(OutcomeName(outcome))}});
  }
  for (TenantRejection reason :
       {TenantRejection::kRate, TenantRejection::kInFlight, TenantRejection::kModel}) {
    rejections_[static_cast<size_t>(reason)] = &families.tenant_rejections->Add(
        {{"tenant", name}, {"reason", std::string(TenantRejectionName(reason))}});
  }
  request_seconds_ = &families.tenant_request_seconds->Add({{"tenant", name}}, LatencyBuckets());
}

void TenantMetrics::OnRejected(TenantRejection reason) {
  rejections_[static_cast<size_t>(reason)]->Increment();
}

void TenantMetrics::OnFinished(absl::StatusCode code, Duration latency) {
  requests_[static_cast<size_t>(OutcomeForStatus(code))]->Increment();
  request_seconds_->Observe(std::chrono::duration<double>(latency).count());
}

}  // namespace inferd
