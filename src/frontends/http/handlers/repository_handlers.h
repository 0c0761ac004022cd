// The repository extension's model control (load, unload) and inferd's traffic rules:
//   POST /v2/repository/models/M/load     re-reads M's folder and loads what its policy serves
//   POST /v2/repository/models/M/unload   stops serving M until the next load
//   GET  /v2/repository/models/M/traffic  M's labels and weights
//   POST /v2/repository/models/M/traffic  replaces them: {"labels": {"stable": 1},
//                                         "traffic": {"stable": 90, "canary": 10}}
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_REPOSITORY_HANDLERS_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_REPOSITORY_HANDLERS_H_

#include <string_view>

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

// Answers when the load ends (on the loader thread), never blocking the I/O thread.
void HandleRepositoryLoad(const HandlerContext& ctx, std::string_view name, ResponderPtr responder);
HttpReply HandleRepositoryUnload(const HandlerContext& ctx, std::string_view name);
HttpReply HandleGetTraffic(const HandlerContext& ctx, std::string_view name);
HttpReply HandleSetTraffic(const HandlerContext& ctx, std::string_view name,
                           const HttpRequestView& request);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_REPOSITORY_HANDLERS_H_
