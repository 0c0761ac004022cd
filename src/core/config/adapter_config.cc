#include "core/config/adapter_config.h"

#include <cmath>
#include <filesystem>
#include <set>

#include <yaml-cpp/yaml.h>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/config/config_field_reader.h"
#include "core/config/model_name.h"

namespace inferd {

absl::Status CheckAdapterScale(double scale, std::string_view field) {
  if (!std::isfinite(scale) || std::fabs(scale) > kMaxAdapterScale) {
    return absl::InvalidArgumentError(StrCat(field, ": an adapter's scale must be a finite number",
                                             " in -", kMaxAdapterScale, "..", kMaxAdapterScale,
                                             ", got ", scale));
  }
  return absl::OkStatus();
}

std::optional<AdapterName> SplitAdapterName(std::string_view name) {
  const size_t colon = name.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == name.size()) {
    return std::nullopt;
  }
  return AdapterName{name.substr(0, colon), name.substr(colon + 1)};
}

absl::StatusOr<std::vector<AdapterConfig>> ParseAdapters(const FieldReader& reader,
                                                         const YAML::Node& node) {
  std::vector<AdapterConfig> adapters;
  if (!node || node.IsNull()) return adapters;
  if (!node.IsSequence()) {
    return reader.Error("adapters", "must be a list of {name, path, scale}");
  }
  if (node.size() > kMaxAdapters) {
    return reader.Error("adapters", StrCat("declares ", node.size(), " adapters; a model may have",
                                           " at most ", kMaxAdapters));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item = StrCat("adapters[", i, "]");
    RETURN_IF_ERROR(reader.CheckKeys(node[i], item, {"name", "path", "scale"}));
    for (const char* required : {"name", "path"}) {
      if (!node[i][required]) return reader.Error(StrCat(item, ".", required), "is required");
    }
    AdapterConfig adapter;
    ASSIGN_OR_RETURN(adapter.name, reader.String(node[i]["name"], item + ".name"));
    if (absl::Status valid = ValidateModelName(adapter.name); !valid.ok()) {
      return reader.Error(item + ".name", std::string(valid.message()));
    }
    if (adapter.name.find(':') != std::string::npos) {
      return reader.Error(item + ".name", StrCat("'", adapter.name,
                                                 "' has a ':', which separates a model from its"
                                                 " adapter in a request's \"model\""));
    }
    if (!names.insert(adapter.name).second) {
      return reader.Error(item + ".name", StrCat("'", adapter.name, "' is declared twice"));
    }
    ASSIGN_OR_RETURN(adapter.path, reader.String(node[i]["path"], item + ".path"));
    // Inside the version folder: a config must not reach files elsewhere on the machine.
    const std::filesystem::path path(adapter.path);
    bool escapes = path.empty() || path.is_absolute();
    for (const auto& part : path) escapes = escapes || part == "..";
    if (escapes) {
      return reader.Error(item + ".path", StrCat("'", adapter.path,
                                                 "' must be a path inside the version folder "
                                                 "(relative, without '..')"));
    }
    if (node[i]["scale"]) {
      ASSIGN_OR_RETURN(adapter.scale, reader.Number(node[i]["scale"], item + ".scale"));
      if (absl::Status valid = CheckAdapterScale(adapter.scale, item + ".scale"); !valid.ok()) {
        return absl::InvalidArgumentError(StrCat(reader.source(), ": ", valid.message()));
      }
    }
    adapters.push_back(std::move(adapter));
  }
  return adapters;
}

}  // namespace inferd
