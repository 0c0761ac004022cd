#include "auth/key_ring.h"

#include <utility>

#include "common/strings.h"

namespace inferd {

absl::Status KeyRing::AddKey(ApiKey key) {
  for (const ApiKey& existing : keys_) {
    if (existing.name == key.name) {
      return absl::AlreadyExistsError(StrCat("two keys are named '", key.name, "'"));
    }
    if (DigestsEqual(existing.digest, key.digest)) {
      return absl::AlreadyExistsError(
          StrCat("keys '", existing.name, "' and '", key.name, "' are the same key"));
    }
  }
  keys_.push_back(std::move(key));
  return absl::OkStatus();
}

absl::StatusOr<Tenant*> KeyRing::AddTenant(TenantLimits limits, const TimeSource* time) {
  if (FindTenant(limits.name) != nullptr) {
    return absl::AlreadyExistsError(StrCat("tenant '", limits.name, "' is defined twice"));
  }
  tenants_.push_back(std::make_unique<Tenant>(std::move(limits), time));
  return tenants_.back().get();
}

Tenant* KeyRing::FindTenant(std::string_view name) const {
  for (const auto& tenant : tenants_) {
    if (tenant->name() == name) return tenant.get();
  }
  return nullptr;
}

const ApiKey* KeyRing::Find(std::string_view presented) const {
  const KeyDigest digest = DigestOfKey(presented);
  const ApiKey* found = nullptr;
  // Every digest is compared, even after a match: the time depends only on the key count.
  for (const ApiKey& key : keys_) {
    if (DigestsEqual(key.digest, digest)) found = &key;
  }
  return found;
}

}  // namespace inferd
