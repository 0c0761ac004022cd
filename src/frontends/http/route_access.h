// Which access class each HTTP endpoint belongs to (auth/roles.h) and the model it is for,
// decided from the method and path alone, before any handler runs. The router checks it at
// its entry, so no handler needs to know about keys.
//
//   public      GET /v2/health/live, /v2/health/ready
//   inference   /v2/models/M[/versions/V][/ready|/infer], POST /predict, TF-Serving :predict,
//               GET /v2 (server metadata), and any unknown path (it answers 404 to a caller
//               with a key, 401 without)
//   monitoring  GET /metrics, /dashboard[...], GET /v2/logging, GET /v2/models[/M]/stats,
//               GET /v2/repository/stats, GET /v2/repository/models/M/traffic
//   management  POST /v2/repository/index, /v2/repository/models/M/load|unload,
//               POST .../traffic, POST /v2/logging (any method other than GET on these)
#ifndef INFERD_FRONTENDS_HTTP_ROUTE_ACCESS_H_
#define INFERD_FRONTENDS_HTTP_ROUTE_ACCESS_H_

#include <string_view>

#include "auth/roles.h"
#include "frontends/http/http_types.h"

namespace inferd {

// The model is a view into `path` or `query`. `default_model` (--default-model) is what
// POST /predict without ?model= goes to; empty: whichever single model the repository has.
RouteAccess ClassifyHttpRoute(HttpMethod method, std::string_view path, std::string_view query,
                              std::string_view default_model);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_ROUTE_ACCESS_H_
