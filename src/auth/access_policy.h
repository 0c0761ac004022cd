// Decides whether one request may proceed: the frontends classify it (public, inference,
// monitoring, management; the model it names) and hand over its Authorization value; the
// policy authenticates the key, checks its roles, the tenant's model list and its limits.
//
// Without keys nothing is authenticated; management is then allowed only to local clients
// of a server that listens on loopback (the frontend judges "local": auth/client_origin.h;
// a request relayed by a proxy is not local), or to anyone when the operator opened it
// explicitly (--allow-unauthenticated-management): a server reachable by others, directly
// or through a proxy, must not let anyone unload its models.
//
// Thread-safety: Check is thread-safe. Ownership: the key ring outlives the policy.
#ifndef INFERD_AUTH_ACCESS_POLICY_H_
#define INFERD_AUTH_ACCESS_POLICY_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "auth/client_origin.h"
#include "auth/key_ring.h"
#include "auth/roles.h"
#include "common/clock.h"

namespace inferd {

// Who may use management endpoints when there are no API keys.
enum class KeylessManagement : uint8_t {
  kOff,           // nobody (a non-loopback listener)
  kLocalClients,  // clients on this host, not relayed (a loopback listener)
  kAnyone,        // --allow-unauthenticated-management
};

struct AccessPolicyOptions {
  const KeyRing* keys = nullptr;  // null or empty: no API keys
  KeylessManagement keyless_management = KeylessManagement::kAnyone;
  // Proxies whose X-Forwarded-For names a local client (--trusted-proxies).
  TrustedProxies trusted_proxies;
};

// What an allowed request carries on: its key and, for a tenant's key, the tenant's
// in-flight slot (held until the reply is sent) and default priority.
struct AccessGrant {
  const ApiKey* key = nullptr;           // null when no keys are configured
  std::shared_ptr<TenantPermit> permit;  // null: no tenant
  int priority = 0;                      // the tenant's default; 0: the model's
};

// Why a request was refused: Unauthenticated (401: answer with a WWW-Authenticate
// challenge), PermissionDenied (403) or ResourceExhausted (429 with Retry-After).
struct AccessDenial {
  absl::Status status;
  int retry_after_s = 0;  // whole seconds, at least 1, for ResourceExhausted
};

// The token of "Bearer <token>" (scheme case-insensitive, surrounding spaces ignored);
// empty when the value is not a bearer credential.
std::string_view BearerToken(std::string_view authorization);

// Whether `tenant` may use `model` (counting a refusal when not): for the frontends whose
// requests name their model in the body (OpenAI's /v1/chat/completions), checked once the
// body is parsed; Check does the same for models named in the path.
absl::Status CheckTenantModel(Tenant& tenant, std::string_view model);

class AccessPolicy {
 public:
  explicit AccessPolicy(AccessPolicyOptions options) : options_(std::move(options)) {}

  // Whether any request can be refused: false when there are no keys and management is
  // open, so frontends may skip classifying requests altogether.
  bool enforcing() const {
    return has_keys() || options_.keyless_management != KeylessManagement::kAnyone;
  }
  bool has_keys() const { return options_.keys != nullptr && !options_.keys->empty(); }

  // OK with `grant` filled, or the denial (also returned). `authorization` is the
  // Authorization header or metadata value ("" when absent); `route.local_client` is what
  // keyless management asks.
  absl::Status Check(const RouteAccess& route, std::string_view authorization, AccessGrant* grant,
                     AccessDenial* denial) const;

  // Whether a request whose connection comes from `peer` (an IP address as text) with
  // `headers` has its client on this host (auth/client_origin.h, with the trusted proxies):
  // what a frontend puts in RouteAccess::local_client for a management request.
  bool IsLocalClient(std::string_view peer, const ForwardingHeaders& headers) const {
    return inferd::IsLocalClient(peer, headers, options_.trusted_proxies);
  }

  // Only the key and its roles, no tenant limits: a gRPC stream is checked so when it opens
  // (each of its messages then goes through Check), an HTTP request once its header is in,
  // before its body is read (the router's Dispatch then calls Check). The key, null
  // without keys.
  absl::StatusOr<const ApiKey*> Authenticate(const RouteAccess& route,
                                             std::string_view authorization) const;

 private:
  const AccessPolicyOptions options_;
};

// The message a refused management request gets when the safe default turned it off.
inline constexpr char kManagementOffMessage[] =
    "management endpoints are off: inferd listens on a non-loopback address and no API keys "
    "are configured. Configure keys with a management role (--api-keys-file or "
    "INFERD_API_KEYS_FILE, see docs/security.md), or start inferd with "
    "--allow-unauthenticated-management to open them to anyone who can reach the port";

// The message a refused keyless management request gets on a loopback listener when it was
// relayed (a forwarding header) or came from another host.
inline constexpr char kManagementNotLocalMessage[] =
    "management endpoints without API keys answer only clients on this host, and this "
    "request was relayed by a proxy (it carries Forwarded, X-Forwarded-For or X-Real-IP) or "
    "came from elsewhere. Configure keys with a management role (--api-keys-file or "
    "INFERD_API_KEY, see docs/security.md); if the proxy is yours and its local clients may "
    "manage inferd, name its address in --trusted-proxies";

}  // namespace inferd

#endif  // INFERD_AUTH_ACCESS_POLICY_H_
