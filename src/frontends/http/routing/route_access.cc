#include "frontends/http/routing/route_access.h"

#include <optional>

#include "frontends/http/codecs/query_string.h"

namespace inferd {

RouteAccess RouteAccessOf(const RouteMatch& match, HttpMethod method, std::string_view query,
                          std::string_view default_model) {
  // An unknown path needs a key with some role: 404 is for callers who may ask.
  if (match.route == nullptr) return RouteAccess::Of(Access::kInference);
  const HttpRoute& route = *match.route;
  const bool read = method == HttpMethod::kGet || method == HttpMethod::kHead;
  const Access access = read ? route.read : route.write;
  if (access != Access::kInference) return RouteAccess::Of(access);
  if (route.model == RouteModel::kQuery) {
    const std::optional<std::string_view> model = QueryParameter(query, "model");
    return RouteAccess::ForModel(model ? *model : default_model);
  }
  if (match.pattern->names_model()) return RouteAccess::ForModel(match.captures.model);
  return RouteAccess::Of(access);
}

RouteAccess ClassifyHttpRoute(HttpMethod method, std::string_view path, std::string_view query,
                              std::string_view default_model) {
  const PathSegments segments = SplitPath(path);
  return RouteAccessOf(MatchHttpRoute(method, segments), method, query, default_model);
}

}  // namespace inferd
