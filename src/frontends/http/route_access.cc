#include "frontends/http/route_access.h"

#include <optional>
#include <vector>

#include "common/strings.h"
#include "frontends/http/query_string.h"

namespace inferd {
namespace {

RouteAccess Of(Access access) { return RouteAccess::Of(access); }
RouteAccess ForModel(std::string_view model) { return RouteAccess::ForModel(model); }

}  // namespace

RouteAccess ClassifyHttpRoute(HttpMethod method, std::string_view path, std::string_view query,
                              std::string_view default_model) {
  const bool read = method == HttpMethod::kGet || method == HttpMethod::kHead;
  const std::vector<std::string_view> s = SplitSkipEmpty(path, '/');
  const size_t n = s.size();
  if (n == 0) return Of(Access::kInference);

  if (n == 1 && s[0] == "predict") {
    const std::optional<std::string_view> model = QueryParameter(query, "model");
    return ForModel(model ? *model : default_model);
  }
  if (n >= 3 && s[0] == "v1" && s[1] == "models") {
    std::string_view model = s[2];
    if (n == 3 && model.ends_with(":predict")) model.remove_suffix(8);
    return ForModel(model);
  }
  if (n == 1 && s[0] == "metrics") return Of(Access::kMonitoring);
  if (s[0] == "dashboard") return Of(Access::kMonitoring);
  if (s[0] != "v2") return Of(Access::kInference);
  if (n == 1) return Of(Access::kInference);
  if (n == 2 && s[1] == "logging") return Of(read ? Access::kMonitoring : Access::kManagement);
  if (n == 3 && s[1] == "health") return Of(Access::kPublic);
  if (s[1] == "systemsharedmemory" || s[1] == "cudasharedmemory") {
    // Registering makes the server open a file on its host and write outputs into it.
    return Of(read ? Access::kMonitoring : Access::kManagement);
  }
  if (s[1] == "repository") {
    if (n == 3 && s[2] == "stats") return Of(Access::kMonitoring);
    if (n == 5 && s[2] == "models" && s[4] == "traffic") {
      return Of(read ? Access::kMonitoring : Access::kManagement);
    }
    // index, load, unload and whatever else the repository API grows: changes or lists
    // the whole repository.
    return Of(Access::kManagement);
  }
  if (s[1] == "models") {
    if (n == 3 && s[2] == "stats") return Of(Access::kMonitoring);
    if (n >= 3 && s.back() == "stats") return Of(Access::kMonitoring);
    if (n >= 3) return ForModel(s[2]);
  }
  return Of(Access::kInference);
}

}  // namespace inferd
