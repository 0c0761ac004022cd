// The roles an API key can hold, and the access class of each endpoint.
//
//   inference   infer, model metadata/readiness/config, server metadata
//   monitoring  read-only server-wide views: /metrics, the dashboard, statistics, GET logging
//               settings, GET traffic rules, shared-memory status
//   management  changes: load, unload, POST traffic, POST logging, repository index,
//               registering and unregistering shared memory; implies monitoring
//
// Health (live/ready) is public: load balancers probe it without credentials.
#ifndef INFERD_AUTH_ROLES_H_
#define INFERD_AUTH_ROLES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

enum class Access : uint8_t { kPublic, kInference, kMonitoring, kManagement };

// What a frontend knows about a request before it runs: the endpoint's class and the model
// it is for. `for_model` with an empty `model`: the request may reach a model it does not
// name (POST /predict without ?model=).
struct RouteAccess {
  Access access = Access::kInference;
  bool for_model = false;
  std::string_view model;
  // The frontend judged the client to be on this host and not relayed
  // (auth/client_origin.h); only keyless management asks. False unless a frontend says so.
  bool local_client = false;

  static RouteAccess Of(Access access) {
    RouteAccess route;
    route.access = access;
    return route;
  }
  static RouteAccess ForModel(std::string_view model) {
    RouteAccess route;
    route.for_model = true;
    route.model = model;
    return route;
  }
};

// "public", "inference", "monitoring", "management".
std::string_view AccessName(Access access);

// A set of roles as bits; the management bit also grants monitoring.
class RoleSet {
 public:
  static constexpr uint8_t kInference = 1;
  static constexpr uint8_t kMonitoring = 2;
  static constexpr uint8_t kManagement = 4;

  RoleSet() = default;
  explicit RoleSet(uint8_t bits) : bits_(bits) {}

  void Add(uint8_t role) { bits_ |= role; }
  bool empty() const { return bits_ == 0; }
  // Whether these roles may use an endpoint of class `access`.
  bool Allows(Access access) const;
  // "inference, management" (for messages and logs).
  std::string ToString() const;

 private:
  uint8_t bits_ = 0;
};

// One role by its name; InvalidArgument naming the valid ones otherwise.
absl::StatusOr<uint8_t> ParseRole(std::string_view name);

}  // namespace inferd

#endif  // INFERD_AUTH_ROLES_H_
