// Which access class an HTTP request belongs to (auth/roles.h) and the model it is for,
// decided from its method and path alone, before any handler runs. The classes are the
// route table's (http_routes.h): the router dispatches from the same rows, so no endpoint
// can be served without a class. In short:
//
//   public      GET /v2/health/live, /v2/health/ready
//   inference   /v2/models/M[/versions/V][/ready|/infer], POST /predict, TF-Serving :predict,
//               GET /v2 (server metadata), and any unknown path (it answers 404 to a caller
//               with a key, 401 without)
//   monitoring  GET /metrics, /dashboard[...], GET /v2/logging, GET /v2/models[/M]/stats,
//               GET /v2/repository/stats, GET /v2/repository/models/M/traffic
//   management  POST /v2/repository/index, /v2/repository/models/M/load|unload,
//               POST .../traffic, POST /v2/logging (any method other than GET on these)
#ifndef INFERD_FRONTENDS_HTTP_ROUTING_ROUTE_ACCESS_H_
#define INFERD_FRONTENDS_HTTP_ROUTING_ROUTE_ACCESS_H_

#include <string_view>

#include "auth/roles.h"
#include "frontends/http/http_types.h"
#include "frontends/http/routing/http_routes.h"

namespace inferd {

// The class of a request that matched `match` (MatchHttpRoute). An inference route names
// its model: the one its path captured, or for POST /predict `query`'s ?model=, else
// `default_model` (--default-model; empty: whichever single model the repository has).
// The model is a view into the path or `query`.
RouteAccess RouteAccessOf(const RouteMatch& match, HttpMethod method, std::string_view query,
                          std::string_view default_model);

// RouteAccessOf for a path not yet matched.
RouteAccess ClassifyHttpRoute(HttpMethod method, std::string_view path, std::string_view query,
                              std::string_view default_model);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_ROUTING_ROUTE_ACCESS_H_
