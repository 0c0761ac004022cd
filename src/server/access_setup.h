// Start-up wiring of access control: reads the API keys (file and environment), attaches the
// tenants' metrics, applies the safe default for management on non-loopback addresses, and
// says at start-up what is protected.
#ifndef INFERD_SERVER_ACCESS_SETUP_H_
#define INFERD_SERVER_ACCESS_SETUP_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "auth/access_policy.h"
#include "auth/key_ring.h"
#include "observability/metrics_registry.h"
#include "server/server_options.h"

namespace inferd {

// The environment variable holding one API key with every role (for a single operator).
inline constexpr char kApiKeyVariable[] = "INFERD_API_KEY";

// Whether `host` is a loopback address (127.0.0.0/8, ::1) or "localhost".
bool IsLoopbackHost(const std::string& host);

struct AccessSetup {
  std::unique_ptr<KeyRing> keys;  // never null; empty without keys
  std::unique_ptr<AccessPolicy> policy;
};

// InvalidArgument/NotFound for an unreadable or invalid key file (the server must not start
// with fewer keys than the operator meant).
absl::StatusOr<AccessSetup> SetUpAccess(const ServerOptions& options, MetricsRegistry* metrics);

}  // namespace inferd

#endif  // INFERD_SERVER_ACCESS_SETUP_H_
