#include "core/config/lifecycle_config_yaml.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "common/strings.h"
#include "core/config/version_dirs.h"

namespace inferd {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::Status Error(std::string_view field, std::string_view message) const {
    return absl::InvalidArgumentError(StrCat(source_, ": ", field, ": ", message));
  }

  // A decimal integer in [min, max]; yaml-cpp's own conversion would read "010" as octal.
  absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view field, int64_t min,
                                  int64_t max) const {
    int64_t value = 0;
    if (node.IsScalar()) {
      const std::string& text = node.Scalar();
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      const bool leading_zero = text.size() > 1 && text[0] == '0';
      if (ec == std::errc() && end == text.data() + text.size() && !leading_zero) {
        if (value >= min && value <= max) return value;
        return Error(field, StrCat("must be in ", min, "..", max, ", got ", value));
      }
    }
    return Error(field, "must be an integer (decimal digits)");
  }

  absl::StatusOr<int64_t> Version(const YAML::Node& node, std::string_view field) const {
    std::optional<int64_t> version =
        node.IsScalar() ? ParseVersionDirName(node.Scalar()) : std::nullopt;
    if (!version) return Error(field, "must be a version number (a non-negative integer)");
    return *version;
  }

  absl::StatusOr<bool> Bool(const YAML::Node& node, std::string_view field) const {
    if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) {
      return node.Scalar() == "true";
    }
    return Error(field, "must be true or false");
  }

 private:
  std::string source_;
};

absl::StatusOr<VersionPolicy> ParsePolicy(const Reader& reader, const YAML::Node& node) {
  VersionPolicy policy;
  const char* kHelp = "must be `all`, {latest: N} or {specific: [versions]}";
  if (node.IsScalar()) {
    if (node.Scalar() != "all") return reader.Error("version_policy", kHelp);
    policy.kind = VersionPolicy::Kind::kAll;
    return policy;
  }
  if (!node.IsMap() || node.size() != 1) return reader.Error("version_policy", kHelp);
  if (const YAML::Node latest = node["latest"]) {
    policy.kind = VersionPolicy::Kind::kLatest;
    auto n = reader.Integer(latest, "version_policy.latest", 1, 1000);
    if (!n.ok()) return n.status();
    policy.latest = *n;
    return policy;
  }
  if (const YAML::Node specific = node["specific"]) {
    policy.kind = VersionPolicy::Kind::kSpecific;
    if (!specific.IsSequence() || specific.size() == 0) {
      return reader.Error("version_policy.specific", "must be a non-empty list of versions");
    }
    for (size_t i = 0; i < specific.size(); ++i) {
      auto v = reader.Version(specific[i], StrCat("version_policy.specific[", i, "]"));
      if (!v.ok()) return v.status();
      policy.specific.push_back(*v);
    }
    std::sort(policy.specific.begin(), policy.specific.end());
    policy.specific.erase(std::unique(policy.specific.begin(), policy.specific.end()),
                          policy.specific.end());
    return policy;
  }
  return reader.Error("version_policy", kHelp);
}

absl::StatusOr<std::map<int64_t, std::string>> ParseDigests(const Reader& reader,
                                                            const YAML::Node& node) {
  if (!node.IsMap()) {
    return reader.Error("sha256", "must be a mapping of version: hex SHA-256 of its model file");
  }
  std::map<int64_t, std::string> digests;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    auto version = reader.Version(entry.first, StrCat("sha256.", key));
    if (!version.ok()) return version.status();
    std::string digest = entry.second.IsScalar() ? entry.second.Scalar() : "";
    std::transform(digest.begin(), digest.end(), digest.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (digest.size() != 64 || digest.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return reader.Error(StrCat("sha256.", key), "must be 64 hexadecimal digits");
    }
    digests[*version] = std::move(digest);
  }
  return digests;
}

absl::Status ParseTraffic(const Reader& reader, const YAML::Node& root, TrafficRules* rules) {
  if (const YAML::Node labels = root["labels"]) {
    if (!labels.IsMap()) return reader.Error("labels", "must be a mapping of label: version");
    for (const auto& entry : labels) {
      const std::string label = entry.first.Scalar();
      if (label.empty() || ParseVersionDirName(label)) {
        return reader.Error(StrCat("labels.", label), "a label is a name, not a number");
      }
      auto version = reader.Version(entry.second, StrCat("labels.", label));
      if (!version.ok()) return version.status();
      rules->labels[label] = *version;
    }
  }
  if (const YAML::Node traffic = root["traffic"]) {
    if (!traffic.IsMap()) {
      return reader.Error("traffic", "must be a mapping of label or version: weight");
    }
    for (const auto& entry : traffic) {
      const std::string target = entry.first.Scalar();
      auto weight = reader.Integer(entry.second, StrCat("traffic.", target), 1, 1'000'000);
      if (!weight.ok()) return weight.status();
      if (!ResolveTrafficTarget(*rules, target)) {
        return reader.Error(StrCat("traffic.", target), "is neither a label nor a version number");
      }
      rules->weights.emplace_back(target, *weight);
    }
  }
  return absl::OkStatus();
}

}  // namespace

const std::set<std::string>& LifecycleConfigKeys() {
  static const auto* keys =
      new std::set<std::string>{"version_policy", "load",   "pin",     "idle_unload_s",
                                "sha256",         "labels", "traffic", "version_swap"};
  return *keys;
}

absl::StatusOr<LifecycleConfig> ParseLifecycleConfig(const YAML::Node& root,
                                                     std::string_view source) {
  Reader reader(source);
  LifecycleConfig config;
  if (const YAML::Node policy = root["version_policy"]) {
    auto parsed = ParsePolicy(reader, policy);
    if (!parsed.ok()) return parsed.status();
    config.version_policy = *std::move(parsed);
  }
  if (const YAML::Node load = root["load"]) {
    if (!load.IsScalar() || (load.Scalar() != "lazy" && load.Scalar() != "eager")) {
      return reader.Error("load", "must be `eager` (at start) or `lazy` (on the first request)");
    }
    config.lazy = load.Scalar() == "lazy";
  }
  if (const YAML::Node pin = root["pin"]) {
    auto parsed = reader.Bool(pin, "pin");
    if (!parsed.ok()) return parsed.status();
    config.pin = *parsed;
  }
  if (const YAML::Node idle = root["idle_unload_s"]) {
    auto parsed = reader.Integer(idle, "idle_unload_s", 0, int64_t{365} * 24 * 3600);
    if (!parsed.ok()) return parsed.status();
    config.idle_unload_s = *parsed;
  }
  if (const YAML::Node swap = root["version_swap"]) {
    if (!swap.IsScalar() ||
        (swap.Scalar() != "availability_preserving" && swap.Scalar() != "resource_preserving")) {
      return reader.Error("version_swap",
                          "must be `availability_preserving` or `resource_preserving`");
    }
    config.resource_preserving = swap.Scalar() == "resource_preserving";
  }
  if (const YAML::Node digests = root["sha256"]) {
    auto parsed = ParseDigests(reader, digests);
    if (!parsed.ok()) return parsed.status();
    config.sha256 = *std::move(parsed);
  }
  if (absl::Status traffic = ParseTraffic(reader, root, &config.traffic); !traffic.ok()) {
    return traffic;
  }
  return config;
}

}  // namespace inferd
