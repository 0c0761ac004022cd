// What the HTTP handlers share: what every frontend has (frontend_context.h) and the
// observability endpoints only HTTP serves.
#ifndef INFERD_FRONTENDS_HTTP_HANDLER_CONTEXT_H_
#define INFERD_FRONTENDS_HTTP_HANDLER_CONTEXT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/backend/infer_request.h"
#include "frontends/frontend_context.h"
#include "frontends/http/http_types.h"
#include "observability/metrics_registry.h"
#include "observability/recent_errors.h"

namespace inferd {

// Declared, not included: the folder's shared files sit below its handlers
// (tools/include_graph.py, HTTP_LAYERS).
class StaticFiles;

struct HandlerContext : FrontendContext {
  // Observability endpoints (each may be null: the endpoint then says it is not available).
  MetricsRegistry* metrics = nullptr;
  const RecentErrors* recent_errors = nullptr;
  const StaticFiles* dashboard = nullptr;
};

// Turns a successful answer of version `version` of model `name` into the protocol's reply
// body. Runs on the connection's I/O thread.
using ReplyEncoder =
    std::function<HttpReply(std::string_view name, int64_t version, const InferResponse&)>;

// The Inference-Timeout-Us header's microseconds (0 when absent); InvalidArgument for a
// malformed value or one over kMaxTimeoutUs.
absl::StatusOr<int64_t> HeaderTimeoutUs(const HttpRequestView& view);

// Reads what the HTTP headers say about scheduling (the Inference-Timeout-Us header) into
// `request`, and the caller's tenant (its default priority, its name); a request parameter,
// if given, wins. InvalidArgument for a malformed value.
absl::Status ApplySchedulingHeaders(const HttpRequestView& view, InferRequest& request);

// The model a tenant's model list is checked against for a generation's "model": base for
// "base:adapter" when `model` is no model itself and base is one (an adapter follows its base
// model's rule, InferencePath::ResolveGenerationModel), else `model` itself.
std::string TenantModelOf(const FrontendContext& ctx, std::string_view model);

// NoteModel for a request refused before it reached a model (a malformed body), when a
// version of `name` is loaded; without a loaded version only the HTTP counters see it.
void NoteModelIfLoaded(const HandlerContext& ctx, Responder& responder, std::string_view name,
                       std::optional<int64_t> version);

// Submits `request` for `name` through the inference service. The reply is encoded with
// `encode` on the connection's I/O thread (never on an execution thread); an error status
// becomes an {"error"} reply. The I/O thread never waits for the model or its load.
void SubmitInference(const HandlerContext& ctx, std::string_view name,
                     std::optional<int64_t> version, std::unique_ptr<InferRequest> request,
                     ResponderPtr responder, ReplyEncoder encode);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLER_CONTEXT_H_
