// The live dashboard: GET /dashboard (the page), /dashboard/<file> (its scripts and styles,
// built from dashboard/ at setup) and GET /dashboard/data, the JSON the page polls: models
// and their states, every inferd_* and process_* metric as numbers (the page turns counter
// and histogram deltas into QPS and p99 itself, as PromQL's rate and histogram_quantile
// would), and the recent errors.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_DASHBOARD_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_DASHBOARD_HANDLER_H_

#include <string_view>

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

// `file` is empty for the page itself.
HttpReply HandleDashboardFile(const HandlerContext& ctx, std::string_view file);
HttpReply HandleDashboardData(const HandlerContext& ctx);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_DASHBOARD_HANDLER_H_
