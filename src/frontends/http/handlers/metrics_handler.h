// GET /metrics: the Prometheus text exposition of every inferd metric, served by inferd's
// own HTTP server (no second port).
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_METRICS_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_METRICS_HANDLER_H_

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

HttpReply HandleMetrics(const HandlerContext& ctx);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_METRICS_HANDLER_H_
