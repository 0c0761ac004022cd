#include "auth/access_policy.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "common/strings.h"

namespace inferd {
namespace {

// A longer value is no key of ours; bounding it bounds the hashing work too.
constexpr size_t kMaxAuthorizationBytes = 4096;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

absl::Status Deny(AccessDenial* denial, absl::Status status) {
  denial->status = status;
  return status;
}

}  // namespace

std::string_view BearerToken(std::string_view authorization) {
  authorization = Trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return {};
  }
  const char after = authorization[kScheme.size()];
  if (after != ' ' && after != '\t') return {};
  return Trim(authorization.substr(kScheme.size()));
}

absl::StatusOr<const ApiKey*> AccessPolicy::Authenticate(const RouteAccess& route,
                                                         std::string_view authorization) const {
  const Access access = route.access;
  if (access == Access::kPublic) return nullptr;
  if (!has_keys()) {
    if (access != Access::kManagement) return nullptr;
    switch (options_.keyless_management) {
      case KeylessManagement::kOff:
        return absl::PermissionDeniedError(kManagementOffMessage);
      case KeylessManagement::kLocalClients:
        if (!route.local_client) return absl::PermissionDeniedError(kManagementNotLocalMessage);
        return nullptr;
      case KeylessManagement::kAnyone:
        return nullptr;
    }
    return nullptr;
  }
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        StrCat("this endpoint (", AccessName(access),
               ") needs an API key: send the header 'Authorization: Bearer <key>' "
               "(gRPC: metadata 'authorization: Bearer <key>')"));
  }
  const std::string_view token = authorization.size() > kMaxAuthorizationBytes
                                     ? std::string_view()
                                     : BearerToken(authorization);
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "the Authorization value must be 'Bearer <key>' (bearer API keys are the only "
        "credentials inferd accepts)");
  }
  const ApiKey* key = options_.keys->Find(token);
  if (key == nullptr) return absl::UnauthenticatedError("the API key is not valid");
  if (!key->roles.Allows(access)) {
    return absl::PermissionDeniedError(
        StrCat("the API key '", key->name, "' has the roles [", key->roles.ToString(),
               "]; this endpoint needs the ",
               access == Access::kMonitoring ? "monitoring (or management)" : AccessName(access),
               " role"));
  }
  return key;
}

absl::Status CheckTenantModel(Tenant& tenant, std::string_view model) {
  if (tenant.MayUse(model)) return absl::OkStatus();
  tenant.CountRejection(TenantRejection::kModel);
  return absl::PermissionDeniedError(
      StrCat("tenant '", tenant.name(), "' may not use model '", model,
             "' (its models: ", StrJoin(tenant.limits().models, ", "), ")"));
}

absl::Status AccessPolicy::Check(const RouteAccess& route, std::string_view authorization,
                                 AccessGrant* grant, AccessDenial* denial) const {
  absl::StatusOr<const ApiKey*> key = Authenticate(route, authorization);
  if (!key.ok()) return Deny(denial, key.status());
  grant->key = *key;
  Tenant* tenant = *key != nullptr ? (*key)->tenant : nullptr;
  if (tenant == nullptr) return absl::OkStatus();
  const std::string_view model = route.model;
  if (route.for_model && !model.empty()) {
    if (absl::Status allowed = CheckTenantModel(*tenant, model); !allowed.ok()) {
      return Deny(denial, allowed);
    }
  }
  if (route.for_model && model.empty() && !tenant->limits().models.empty()) {
    // A request that names no model (POST /predict without ?model=) could reach any model.
    tenant->CountRejection(TenantRejection::kModel);
    return Deny(denial, absl::PermissionDeniedError(
                            StrCat("tenant '", tenant->name(),
                                   "' may use only some models: name one (its models: ",
                                   StrJoin(tenant->limits().models, ", "), ")")));
  }
  Duration retry_after{};
  absl::StatusOr<TenantPermit> permit = tenant->Admit(&retry_after);
  if (!permit.ok()) {
    const auto seconds = std::chrono::ceil<std::chrono::seconds>(retry_after).count();
    denial->retry_after_s = static_cast<int>(std::clamp<int64_t>(seconds, 1, 3600));
    return Deny(denial, permit.status());
  }
  grant->permit = std::make_shared<TenantPermit>(*std::move(permit));
  grant->priority = tenant->limits().priority;
  return absl::OkStatus();
}

}  // namespace inferd
