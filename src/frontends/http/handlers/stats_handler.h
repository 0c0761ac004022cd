// The statistics extension: GET /v2/models/stats, /v2/models/M[/versions/V]/stats, in
// Triton's format (so its tools read it) plus inferd's batching settings and tuning table.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_STATS_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_STATS_HANDLER_H_

#include <optional>

#include "frontends/http/handler_context.h"
#include "frontends/http/handlers/kserve_handlers.h"
#include "frontends/http/http_types.h"

namespace inferd {

// `ref` absent: every ready model version.
HttpReply HandleModelStats(const HandlerContext& ctx, const std::optional<ModelRef>& ref);

// GET /v2/repository/stats: memory per device against its budget, lifecycle counters
// (loads, evictions, reloads, idle unloads) and every version's memory and request count,
// evicted and lazy models included.
HttpReply HandleRepositoryStats(const HandlerContext& ctx);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_STATS_HANDLER_H_
