#include "auth/tenant.h"

#include <algorithm>
#include <utility>

#include "common/strings.h"

namespace inferd {

std::string_view TenantRejectionName(TenantRejection reason) {
  switch (reason) {
    case TenantRejection::kRate:
      return "rate_limit";
    case TenantRejection::kInFlight:
      return "in_flight_limit";
    case TenantRejection::kModel:
      return "model_not_allowed";
  }
  return "unknown";
}

TenantPermit& TenantPermit::operator=(TenantPermit&& other) noexcept {
  if (this != &other) {
    Finish(absl::StatusCode::kCancelled);
    tenant_ = std::exchange(other.tenant_, nullptr);
    admitted_ = other.admitted_;
  }
  return *this;
}

void TenantPermit::Finish(absl::StatusCode code) {
  if (tenant_ == nullptr) return;
  std::exchange(tenant_, nullptr)->Release(code, admitted_);
}

Tenant::Tenant(TenantLimits limits, const TimeSource* time)
    : limits_(std::move(limits)), time_(time) {
  if (limits_.requests_per_second > 0) {
    const double burst =
        limits_.burst > 0 ? limits_.burst : std::max(1.0, limits_.requests_per_second);
    bucket_.emplace(limits_.requests_per_second, burst, time_->Now());
  }
}

bool Tenant::MayUse(std::string_view model) const {
  if (limits_.models.empty()) return true;
  return std::find(limits_.models.begin(), limits_.models.end(), model) != limits_.models.end();
}

absl::StatusOr<TenantPermit> Tenant::Admit(Duration* retry_after) {
  const TimePoint now = time_->Now();
  // The in-flight slot first: a request refused for concurrency must not spend a token.
  if (limits_.max_in_flight > 0) {
    if (in_flight_.fetch_add(1, std::memory_order_acq_rel) >= limits_.max_in_flight) {
      in_flight_.fetch_sub(1, std::memory_order_acq_rel);
      CountRejection(TenantRejection::kInFlight);
      *retry_after = std::chrono::seconds(1);
      return absl::ResourceExhaustedError(
          StrCat("tenant '", limits_.name, "' already has ", limits_.max_in_flight,
                 " requests in flight (its max_in_flight); retry when one has finished"));
    }
  } else {
    in_flight_.fetch_add(1, std::memory_order_acq_rel);
  }
  // The bucket exists exactly when the limits set a rate (the constructor): checking the
  // constant limit keeps unlimited tenants off the lock.
  if (limits_.requests_per_second > 0) {
    Duration wait{};
    bool taken = false;
    {
      MutexLock lock(&mu_);
      taken = bucket_->TryTake(now, &wait);
    }
    if (!taken) {
      in_flight_.fetch_sub(1, std::memory_order_acq_rel);
      CountRejection(TenantRejection::kRate);
      *retry_after = wait;
      return absl::ResourceExhaustedError(StrCat("tenant '", limits_.name,
                                                 "' is over its rate limit of ",
                                                 limits_.requests_per_second, " requests/s"));
    }
  }
  return TenantPermit(this, now);
}

absl::StatusOr<TenantSlots> Tenant::AdmitMore(int count) {
  if (count <= 0) return TenantSlots();
  const int before = in_flight_.fetch_add(count, std::memory_order_acq_rel);
  if (limits_.max_in_flight > 0 && before + count > limits_.max_in_flight) {
    in_flight_.fetch_sub(count, std::memory_order_acq_rel);
    CountRejection(TenantRejection::kInFlight);
    return absl::ResourceExhaustedError(
        StrCat("tenant '", limits_.name, "' may have ", limits_.max_in_flight,
               " sequences in flight (its max_in_flight); this request's ", count + 1,
               " choices ('n') would make ", before + count,
               "; ask for fewer choices or retry when others have finished"));
  }
  return TenantSlots(this, count);
}

TenantSlots& TenantSlots::operator=(TenantSlots&& other) noexcept {
  if (this != &other) {
    if (tenant_ != nullptr) tenant_->in_flight_.fetch_sub(count_, std::memory_order_acq_rel);
    tenant_ = std::exchange(other.tenant_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

TenantSlots::~TenantSlots() {
  if (tenant_ != nullptr) tenant_->in_flight_.fetch_sub(count_, std::memory_order_acq_rel);
}

void Tenant::CountRejection(TenantRejection reason) {
  if (observer_) observer_->OnRejected(reason);
}

void Tenant::Release(absl::StatusCode code, TimePoint admitted) {
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  if (observer_) observer_->OnFinished(code, time_->Now() - admitted);
}

}  // namespace inferd
