// KServe v2 REST endpoints: health, server and model metadata, readiness, inference and the
// repository index. Each is a plain function from a request to a reply; none blocks on a
// model (inference replies later through the Responder).
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_KSERVE_HANDLERS_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_KSERVE_HANDLERS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

// Identifies a model in a URL: /v2/models/{name}[/versions/{version}].
struct ModelRef {
  std::string_view name;
  std::optional<int64_t> version;
};

HttpReply HandleServerLive(const HandlerContext& ctx);
HttpReply HandleServerReady(const HandlerContext& ctx);
HttpReply HandleServerMetadata(const HandlerContext& ctx);
HttpReply HandleModelMetadata(const HandlerContext& ctx, const ModelRef& ref);
HttpReply HandleModelReady(const HandlerContext& ctx, const ModelRef& ref);
HttpReply HandleRepositoryIndex(const HandlerContext& ctx);
void HandleModelInfer(const HandlerContext& ctx, const ModelRef& ref,
                      const HttpRequestView& request, ResponderPtr responder);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_KSERVE_HANDLERS_H_
