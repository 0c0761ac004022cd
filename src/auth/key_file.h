// Reads the API key file (--api-keys-file / INFERD_API_KEYS_FILE) into a KeyRing.
//
//   keys:
//     - name: ops                  # shown in logs and errors; never the key itself
//       key_env: INFERD_OPS_KEY    # the key, from this environment variable
//       roles: [management, inference]
//     - name: alice-app
//       sha256: 9f86d0...          # the key's SHA-256 (printf %s KEY | sha256sum)
//       roles: [inference]
//       tenant: alice
//     - name: bob-app
//       key: "a long random string" # in the file itself: keep it mode 0600
//       roles: [inference]
//       tenant: bob
//   tenants:
//     alice: {requests_per_second: 20, burst: 40, max_in_flight: 4, priority: 2,
//             models: [mlp_scorer]}
//     bob: {}
//
// Each key gives exactly one of key, sha256 or key_env. Plain keys must be at least 16
// characters. Unknown fields are errors (a typo must not silently drop a limit).
#ifndef INFERD_AUTH_KEY_FILE_H_
#define INFERD_AUTH_KEY_FILE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "auth/key_ring.h"
#include "common/clock.h"

namespace inferd {

// Looks up an environment variable; null when unset.
using EnvLookup = std::function<const char*(const char*)>;

inline constexpr size_t kMinKeyLength = 16;

// Parses the key file's text. `source` names it in errors. Tenants' clocks use `time`.
absl::StatusOr<std::unique_ptr<KeyRing>> ParseKeyFile(std::string_view yaml,
                                                      std::string_view source,
                                                      const TimeSource* time, const EnvLookup& env);

// Reads and parses the file at `path` (at most 1 MiB).
absl::StatusOr<std::unique_ptr<KeyRing>> LoadKeyFile(const std::string& path,
                                                     const TimeSource* time, const EnvLookup& env);

}  // namespace inferd

#endif  // INFERD_AUTH_KEY_FILE_H_
