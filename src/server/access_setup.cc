#include "server/access_setup.h"

#include <cstdlib>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/address.hpp>

#include "auth/key_file.h"
#include "common/strings.h"

namespace inferd {

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

absl::StatusOr<AccessSetup> SetUpAccess(const ServerOptions& options, MetricsRegistry* metrics) {
  AccessSetup setup;
  const EnvLookup env = [](const char* name) { return std::getenv(name); };
  if (!options.api_keys_file.empty()) {
    absl::StatusOr<std::unique_ptr<KeyRing>> ring =
        LoadKeyFile(options.api_keys_file, RealTime(), env);
    if (!ring.ok()) return ring.status();
    setup.keys = *std::move(ring);
  } else {
    setup.keys = std::make_unique<KeyRing>();
  }
  if (const char* key = std::getenv(kApiKeyVariable); key != nullptr && *key != '\0') {
    if (std::string_view(key).size() < kMinKeyLength) {
      return absl::InvalidArgumentError(StrCat(kApiKeyVariable, " is shorter than ", kMinKeyLength,
                                               " characters (use e.g. `openssl rand -hex 32`)"));
    }
    ApiKey admin;
    admin.name = kApiKeyVariable;
    admin.digest = DigestOfKey(key);
    admin.roles.Add(RoleSet::kInference);
    admin.roles.Add(RoleSet::kManagement);
    if (absl::Status added = setup.keys->AddKey(std::move(admin)); !added.ok()) return added;
  }
  if (metrics != nullptr) {
    for (const auto& tenant : setup.keys->tenants()) {
      tenant->SetObserver(metrics->ForTenant(tenant->name()));
    }
  }

  absl::StatusOr<TrustedProxies> trusted = TrustedProxies::Parse(options.trusted_proxies);
  if (!trusted.ok()) return trusted.status();

  const bool loopback = IsLoopbackHost(options.host);
  AccessPolicyOptions policy;
  policy.keys = setup.keys.get();
  // On loopback "local" is judged per request: a reverse proxy on this host (deploy/nginx)
  // connects from loopback too and relays anyone's requests.
  policy.keyless_management = options.allow_unauthenticated_management ? KeylessManagement::kAnyone
                              : loopback ? KeylessManagement::kLocalClients
                                         : KeylessManagement::kOff;
  policy.trusted_proxies = *std::move(trusted);
  setup.policy = std::make_unique<AccessPolicy>(std::move(policy));

  if (!setup.keys->empty()) {
    spdlog::info("access: {} API key(s), {} tenant(s); every endpoint but health needs a key",
                 setup.keys->size(), setup.keys->tenants().size());
  } else if (!loopback && !options.allow_unauthenticated_management) {
    spdlog::warn(
        "access: no API keys and listening on {}: management endpoints (load, unload, "
        "traffic, logging changes, repository index) are OFF; inference and monitoring are open "
        "to anyone who reaches the port. Configure --api-keys-file (docs/security.md) or pass "
        "--allow-unauthenticated-management",
        options.host);
  } else if (!loopback) {
    spdlog::warn(
        "access: no API keys and listening on {} with --allow-unauthenticated-management: "
        "anyone who reaches the port can load and unload models",
        options.host);
  } else if (options.allow_unauthenticated_management) {
    spdlog::info("access: no API keys; listening on loopback, every endpoint is open");
  } else {
    spdlog::info(
        "access: no API keys; listening on loopback: every endpoint is open to local clients; "
        "management refuses requests relayed by a proxy (Forwarded, X-Forwarded-For, "
        "X-Real-IP){}",
        options.trusted_proxies.empty()
            ? " (--trusted-proxies names proxies whose X-Forwarded-For is believed)"
            : StrCat(" unless from --trusted-proxies ", options.trusted_proxies,
                     " for a local client"));
  }
  return setup;
}

}  // namespace inferd
