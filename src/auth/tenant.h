// A tenant: the limits that the API keys carrying its name share, and their enforcement.
//
// Admit() lets a request in when the tenant's token bucket has a token and fewer than
// max_in_flight of its requests are being served; the TenantPermit it returns holds the
// in-flight slot until Finish (or its destruction) and reports the outcome and latency to
// the tenant's observer (Prometheus series, observability/tenant_metrics.h).
//
// Thread-safety: Admit and the permits are thread-safe. SetObserver before serving.
// Ownership: the KeyRing owns its tenants; permits must not outlive them.
#ifndef INFERD_AUTH_TENANT_H_
#define INFERD_AUTH_TENANT_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "auth/token_bucket.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace inferd {

struct TenantLimits {
  std::string name;
  double requests_per_second = 0;   // 0: no rate limit
  double burst = 0;                 // bucket size; 0: max(1, requests_per_second)
  int max_in_flight = 0;            // 0: no cap
  int priority = 0;                 // queue priority for requests that set none; 0: model's
  std::vector<std::string> models;  // models its keys may use; empty: all
};

// Why a request was refused, as the rejection metric's label says it.
enum class TenantRejection { kRate, kInFlight, kModel };
std::string_view TenantRejectionName(TenantRejection reason);

// Told about every request of one tenant. Implementations must be thread-safe and cheap.
class TenantObserver {
 public:
  virtual ~TenantObserver() = default;
  virtual void OnRejected(TenantRejection reason) = 0;
  // An admitted request ended with `code` after `latency` (admission to reply).
  virtual void OnFinished(absl::StatusCode code, Duration latency) = 0;
};

class Tenant;

// An admitted request's in-flight slot. Movable; Finish is idempotent and the destructor
// finishes with kCancelled when nobody did (a connection that went away).
class TenantPermit {
 public:
  TenantPermit() = default;
  TenantPermit(Tenant* tenant, TimePoint admitted) : tenant_(tenant), admitted_(admitted) {}
  TenantPermit(TenantPermit&& other) noexcept { *this = std::move(other); }
  TenantPermit& operator=(TenantPermit&& other) noexcept;
  ~TenantPermit() { Finish(absl::StatusCode::kCancelled); }

  void Finish(absl::StatusCode code);
  const Tenant* tenant() const { return tenant_; }

 private:
  Tenant* tenant_ = nullptr;
  TimePoint admitted_;
};

// In-flight slots a request takes besides its permit's one, because it occupies more than
// one (a generation with n choices is n sequences). Movable; released on destruction; not
// reported as requests.
class TenantSlots {
 public:
  TenantSlots() = default;
  TenantSlots(Tenant* tenant, int count) : tenant_(tenant), count_(count) {}
  TenantSlots(TenantSlots&& other) noexcept { *this = std::move(other); }
  TenantSlots& operator=(TenantSlots&& other) noexcept;
  ~TenantSlots();

 private:
  Tenant* tenant_ = nullptr;
  int count_ = 0;
};

class Tenant {
 public:
  Tenant(TenantLimits limits, const TimeSource* time);

  const TenantLimits& limits() const { return limits_; }
  const std::string& name() const { return limits_.name; }

  // Whether the tenant's keys may use `model` (every model when the list is empty).
  bool MayUse(std::string_view model) const;

  // A permit, or ResourceExhausted saying which limit was hit, with `retry_after` set to
  // when trying again makes sense.
  absl::StatusOr<TenantPermit> Admit(Duration* retry_after);
  // `count` more in-flight slots for a request already admitted (TenantSlots), or
  // ResourceExhausted when they would pass max_in_flight: the request is then refused whole.
  absl::StatusOr<TenantSlots> AdmitMore(int count);
  // Counts a refusal decided elsewhere (a model it may not use).
  void CountRejection(TenantRejection reason);

  int in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  void SetObserver(std::unique_ptr<TenantObserver> observer) { observer_ = std::move(observer); }

 private:
  friend class TenantPermit;
  friend class TenantSlots;
  void Release(absl::StatusCode code, TimePoint admitted);

  const TenantLimits limits_;
  const TimeSource* const time_;
  std::unique_ptr<TenantObserver> observer_;
  std::atomic<int> in_flight_{0};
  Mutex mu_;
  std::optional<TokenBucket> bucket_ ABSL_GUARDED_BY(mu_);
};

// Who owns what a caller of `tenant` keeps on the server (shared-memory regions): the
// tenant's name, or "" for every caller without a tenant (keys without one, and everyone when
// no keys are configured), who are together one owner. A tenant is the unit of isolation;
// keys the operator left without one share, as they do with no keys at all. Tenant names are
// never empty (key_file.cc), so no tenant is mistaken for the callers without one.
inline std::string TenantOwner(const Tenant* tenant) {
  return tenant != nullptr ? tenant->name() : std::string();
}

}  // namespace inferd

#endif  // INFERD_AUTH_TENANT_H_
