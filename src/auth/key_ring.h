// The API keys inferd accepts, each with its roles and (optionally) its tenant, and the
// tenants themselves.
//
// Keys are held as SHA-256 digests only. Find() hashes the presented key and compares it
// with every digest in constant time (key_digest.h), so the time it takes does not depend
// on how much of a key a client guessed right.
//
// Thread-safety: immutable after construction (tenants have their own locks).
#ifndef INFERD_AUTH_KEY_RING_H_
#define INFERD_AUTH_KEY_RING_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "auth/key_digest.h"
#include "auth/roles.h"
#include "auth/tenant.h"

namespace inferd {

struct ApiKey {
  std::string name;  // for logs and messages; never the key
  KeyDigest digest{};
  RoleSet roles;
  Tenant* tenant = nullptr;  // owned by the ring; null: no tenant limits
};

class KeyRing {
 public:
  KeyRing() = default;
  KeyRing(const KeyRing&) = delete;
  KeyRing& operator=(const KeyRing&) = delete;

  // AlreadyExists when the name or the key is taken already.
  absl::Status AddKey(ApiKey key);
  // The tenant named `limits.name`; AlreadyExists if there is one.
  absl::StatusOr<Tenant*> AddTenant(TenantLimits limits, const TimeSource* time);
  Tenant* FindTenant(std::string_view name) const;

  // The key whose digest matches `presented`, or null.
  const ApiKey* Find(std::string_view presented) const;

  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }
  const std::vector<ApiKey>& keys() const { return keys_; }
  const std::vector<std::unique_ptr<Tenant>>& tenants() const { return tenants_; }

 private:
  std::vector<ApiKey> keys_;
  std::vector<std::unique_ptr<Tenant>> tenants_;
};

}  // namespace inferd

#endif  // INFERD_AUTH_KEY_RING_H_
