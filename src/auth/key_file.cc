#include "auth/key_file.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;
constexpr size_t kMaxNameLength = 256;
constexpr double kMaxRate = 1e6;
constexpr int64_t kMaxInFlight = 1'000'000;
constexpr int64_t kMaxPriority = 1 << 20;

// Reads fields with messages that say where they are (yaml-cpp throws; caught in one place).
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  template <typename Text>
  absl::Status Error(std::string_view where, const Text& what) const {
    return absl::InvalidArgumentError(StrCat(source_, ": ", where, ": ", what));
  }

  absl::Status CheckKeys(const YAML::Node& map, std::string_view where,
                         const std::set<std::string>& allowed) const {
    if (!map.IsMap()) return Error(where, "must be a mapping");
    for (const auto& item : map) {
      const std::string key = item.first.as<std::string>();
      if (allowed.count(key) == 0) {
        return Error(where,
                     StrCat("unknown field '", key, "' (fields: ", StrJoin(allowed, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Name(const YAML::Node& node, std::string_view where) const {
    if (!node.IsScalar()) return Error(where, "must be a string");
    std::string value = node.as<std::string>();
    if (value.empty() || value.size() > kMaxNameLength) {
      return Error(where, StrCat("must be 1 to ", kMaxNameLength, " characters"));
    }
    for (unsigned char c : value) {
      if (c < 0x21 || c > 0x7e) return Error(where, "must be printable ASCII without spaces");
    }
    return value;
  }

  absl::StatusOr<double> Number(const YAML::Node& node, std::string_view where, double min,
                                double max) const {
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value) ||
        value < min || value > max) {
      return Error(where, StrCat("must be a number from ", min, " to ", max));
    }
    return value;
  }

  absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view where, int64_t min,
                                  int64_t max) const {
    int64_t value = 0;
    if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value) || value < min ||
        value > max) {
      return Error(where, StrCat("must be an integer from ", min, " to ", max));
    }
    return value;
  }

 private:
  const std::string source_;
};

absl::StatusOr<TenantLimits> ParseTenant(const Reader& reader, std::string name,
                                         const YAML::Node& node) {
  const std::string where = StrCat("tenants.", name);
  TenantLimits limits;
  limits.name = std::move(name);
  if (node.IsNull()) return limits;
  RETURN_IF_ERROR(reader.CheckKeys(
      node, where, {"requests_per_second", "burst", "max_in_flight", "priority", "models"}));
  if (const YAML::Node rate = node["requests_per_second"]) {
    ASSIGN_OR_RETURN(limits.requests_per_second,
                     reader.Number(rate, where + ".requests_per_second", 0.001, kMaxRate));
  }
  if (const YAML::Node burst = node["burst"]) {
    if (limits.requests_per_second == 0) {
      return reader.Error(where + ".burst", "needs requests_per_second");
    }
    ASSIGN_OR_RETURN(limits.burst, reader.Number(burst, where + ".burst", 1, kMaxRate));
  }
  if (const YAML::Node cap = node["max_in_flight"]) {
    ASSIGN_OR_RETURN(int64_t value, reader.Integer(cap, where + ".max_in_flight", 1, kMaxInFlight));
    limits.max_in_flight = static_cast<int>(value);
  }
  if (const YAML::Node priority = node["priority"]) {
    ASSIGN_OR_RETURN(int64_t value, reader.Integer(priority, where + ".priority", 1, kMaxPriority));
    limits.priority = static_cast<int>(value);
  }
  if (const YAML::Node models = node["models"]) {
    if (!models.IsSequence() || models.size() == 0) {
      return reader.Error(where + ".models", "must be a non-empty list of model names");
    }
    for (size_t i = 0; i < models.size(); ++i) {
      ASSIGN_OR_RETURN(std::string model,
                       reader.Name(models[i], StrCat(where, ".models[", i, "]")));
      limits.models.push_back(std::move(model));
    }
  }
  return limits;
}

absl::Status ParseKey(const Reader& reader, const YAML::Node& node, size_t index,
                      const EnvLookup& env, KeyRing* ring) {
  std::string where = StrCat("keys[", index, "]");
  RETURN_IF_ERROR(
      reader.CheckKeys(node, where, {"name", "key", "sha256", "key_env", "roles", "tenant"}));
  ApiKey key;
  if (!node["name"]) return reader.Error(where, "needs a name");
  ASSIGN_OR_RETURN(key.name, reader.Name(node["name"], where + ".name"));
  where = StrCat("key '", key.name, "'");
  const int sources = (node["key"] ? 1 : 0) + (node["sha256"] ? 1 : 0) + (node["key_env"] ? 1 : 0);
  if (sources != 1) return reader.Error(where, "needs exactly one of key, sha256, key_env");
  if (const YAML::Node digest = node["sha256"]) {
    if (!digest.IsScalar()) return reader.Error(where + ".sha256", "must be a string");
    absl::StatusOr<KeyDigest> parsed = ParseDigestHex(digest.as<std::string>());
    if (!parsed.ok()) return reader.Error(where + ".sha256", parsed.status().message());
    key.digest = *parsed;
  } else {
    std::string secret;
    if (const YAML::Node variable = node["key_env"]) {
      ASSIGN_OR_RETURN(std::string name, reader.Name(variable, where + ".key_env"));
      const char* value = env(name.c_str());
      if (value == nullptr || *value == '\0') {
        return reader.Error(where + ".key_env",
                            StrCat("environment variable ", name, " is not set"));
      }
      secret = value;
    } else {
      if (!node["key"].IsScalar()) return reader.Error(where + ".key", "must be a string");
      secret = node["key"].as<std::string>();
    }
    if (secret.size() < kMinKeyLength) {
      return reader.Error(where, StrCat("the key is shorter than ", kMinKeyLength,
                                        " characters (use e.g. `openssl rand -hex 32`)"));
    }
    key.digest = DigestOfKey(secret);
  }
  const YAML::Node roles = node["roles"];
  if (!roles || !roles.IsSequence() || roles.size() == 0) {
    return reader.Error(where + ".roles",
                        "needs a list of roles (inference, monitoring, management)");
  }
  for (size_t i = 0; i < roles.size(); ++i) {
    if (!roles[i].IsScalar()) return reader.Error(where + ".roles", "must list role names");
    absl::StatusOr<uint8_t> role = ParseRole(roles[i].as<std::string>());
    if (!role.ok()) return reader.Error(where + ".roles", role.status().message());
    key.roles.Add(*role);
  }
  if (const YAML::Node tenant = node["tenant"]) {
    ASSIGN_OR_RETURN(std::string name, reader.Name(tenant, where + ".tenant"));
    key.tenant = ring->FindTenant(name);
    if (key.tenant == nullptr) {
      return reader.Error(where + ".tenant",
                          StrCat("tenant '", name, "' is not defined under tenants:"));
    }
  }
  absl::Status added = ring->AddKey(std::move(key));
  if (!added.ok()) return reader.Error("keys", added.message());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<KeyRing>> ParseKeyFile(std::string_view yaml,
                                                      std::string_view source,
                                                      const TimeSource* time,
                                                      const EnvLookup& env) {
  const Reader reader{std::string(source)};
  auto ring = std::make_unique<KeyRing>();
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    RETURN_IF_ERROR(reader.CheckKeys(root, "the file", {"keys", "tenants"}));
    if (const YAML::Node tenants = root["tenants"]) {
      if (!tenants.IsMap()) return reader.Error("tenants", "must map tenant names to limits");
      for (const auto& item : tenants) {
        ASSIGN_OR_RETURN(std::string name, reader.Name(item.first, "tenant name"));
        ASSIGN_OR_RETURN(TenantLimits limits, ParseTenant(reader, std::move(name), item.second));
        absl::StatusOr<Tenant*> added = ring->AddTenant(std::move(limits), time);
        if (!added.ok()) return reader.Error("tenants", added.status().message());
      }
    }
    const YAML::Node keys = root["keys"];
    if (!keys || !keys.IsSequence() || keys.size() == 0) {
      return reader.Error("keys", "needs a non-empty list of keys");
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      RETURN_IF_ERROR(ParseKey(reader, keys[i], i, env, ring.get()));
    }
  } catch (const YAML::Exception& e) {
    // The message quotes positions, never the file's text, so no key leaks into a log.
    return absl::InvalidArgumentError(StrCat(source, ": not valid YAML (line ", e.mark.line + 1,
                                             ", column ", e.mark.column + 1, ")"));
  }
  return ring;
}

absl::StatusOr<std::unique_ptr<KeyRing>> LoadKeyFile(const std::string& path,
                                                     const TimeSource* time, const EnvLookup& env) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read the API key file ", path));
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        StrCat("the API key file ", path, " is larger than ", kMaxFileBytes, " bytes"));
  }
  return ParseKeyFile(text, path, time, env);
}

}  // namespace inferd
