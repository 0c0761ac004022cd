#include "frontends/http/router.h"

#include <string>
#include <vector>

#include "common/strings.h"
#include "core/config/version_dirs.h"
#include "frontends/http/access_reply.h"
#include "frontends/http/anthropic_handler.h"
#include "frontends/http/dashboard_handler.h"
#include "frontends/http/error_shape.h"
#include "frontends/http/generation_handlers.h"
#include "frontends/http/kserve_handlers.h"
#include "frontends/http/logging_handler.h"
#include "frontends/http/metrics_handler.h"
#include "frontends/http/model_config_handler.h"
#include "frontends/http/plain_predict_handler.h"
#include "frontends/http/repository_handlers.h"
#include "frontends/http/rerank_handler.h"
#include "frontends/http/route_access.h"
#include "frontends/http/shared_memory_handlers.h"
#include "frontends/http/stats_handler.h"
#include "frontends/http/tfserving_handler.h"

namespace inferd {
namespace {

using Segments = std::vector<std::string_view>;

// The request's credentials as an Authorization value: the header, or else Anthropic's
// x-api-key header (its SDKs send the key there) as "Bearer <key>".
std::string Credentials(const HttpRequestView& request) {
  const std::string_view authorization = request.Header("Authorization");
  if (!authorization.empty()) return std::string(authorization);
  const std::string_view api_key = request.Header("x-api-key");
  if (api_key.empty()) return {};
  return StrCat("Bearer ", api_key);
}

HttpReply UnknownPath(std::string_view path) {
  return ErrorReply(404,
                    StrCat("unknown path '", path, "' (see docs/http-api.md for the endpoints)"));
}

// Reads "M" or "M/versions/V" from the front of `segments`, leaving the rest in `tail`.
absl::StatusOr<ModelRef> ParseModelRef(const Segments& segments, size_t first, Segments* tail) {
  ModelRef ref;
  ref.name = segments[first];
  size_t next = first + 1;
  if (next < segments.size() && segments[next] == "versions") {
    if (next + 1 >= segments.size()) {
      return absl::InvalidArgumentError("missing version after /versions/");
    }
    std::optional<int64_t> version = ParseVersionDirName(segments[next + 1]);
    if (!version) {
      return absl::InvalidArgumentError(
          StrCat("'", segments[next + 1], "' is not a version number"));
    }
    ref.version = version;
    next += 2;
  }
  tail->assign(segments.begin() + static_cast<std::ptrdiff_t>(next), segments.end());
  return ref;
}

}  // namespace

RouteAccess HttpRouter::Classify(const HttpRequestView& request) const {
  RouteAccess route = ClassifyHttpRoute(request.method, request.path, request.query,
                                        context_.inference->configured_default_model());
  if (route.access == Access::kManagement) {
    const ForwardingHeaders forwarding{request.Header("Forwarded"),
                                       request.Header("X-Forwarded-For"),
                                       request.Header("X-Real-IP")};
    route.local_client = context_.access->IsLocalClient(request.peer, forwarding);
  }
  return route;
}

std::optional<HttpReply> HttpRouter::RefuseBeforeBody(const HttpRequestView& head) const {
  const AccessPolicy* access = context_.access;
  if (access == nullptr || !access->enforcing()) return std::nullopt;
  absl::StatusOr<const ApiKey*> key = access->Authenticate(Classify(head), Credentials(head));
  if (key.ok()) return std::nullopt;
  return InPathErrorShape(head.path, AccessDeniedReply(AccessDenial{key.status()}));
}

void HttpRouter::Dispatch(const HttpRequestView& request, ResponderPtr responder) const {
  // Every error in its path's shape, the access check's included (error_shape.h).
  responder = WithErrorShape(ErrorShapeOf(request.path), std::move(responder));
  const AccessPolicy* access = context_.access;
  if (access == nullptr || !access->enforcing()) return Route(request, std::move(responder));
  const RouteAccess route = Classify(request);
  AccessGrant grant;
  AccessDenial denial;
  if (!access->Check(route, Credentials(request), &grant, &denial).ok()) {
    return responder->Send(AccessDeniedReply(denial));
  }
  if (grant.permit) responder = WithTenantPermit(std::move(responder), std::move(grant.permit));
  Tenant* tenant = grant.key != nullptr ? grant.key->tenant : nullptr;
  if (grant.priority > 0 || tenant != nullptr) {
    HttpRequestView with_tenant = request;
    with_tenant.tenant_priority = grant.priority;
    with_tenant.tenant = tenant;
    return Route(with_tenant, std::move(responder));
  }
  Route(request, std::move(responder));
}

void HttpRouter::Route(const HttpRequestView& request, ResponderPtr responder) const {
  const HandlerContext& ctx = context_;
  const bool get = request.method == HttpMethod::kGet;
  const bool post = request.method == HttpMethod::kPost;
  Segments segments = SplitSkipEmpty(request.path, '/');

  if (segments.size() == 1 && segments[0] == "predict") {
    if (!post) return responder->Send(MethodNotAllowed("POST"));
    return HandlePlainPredict(ctx, request, std::move(responder));
  }

  // Rerank (rerank_handler.h) at the three paths llama.cpp's server answers it.
  if ((segments.size() == 1 && segments[0] == "rerank") ||
      (segments.size() == 2 && (segments[0] == "v1" || segments[0] == "v2") &&
       segments[1] == "rerank")) {
    if (!post) return responder->Send(MethodNotAllowed("POST"));
    return HandleRerank(ctx, request, std::move(responder));
  }

  // OpenAI-compatible generation (generation_handlers.h).
  if (!segments.empty() && segments[0] == "v1") {
    const bool chat = segments.size() == 3 && segments[1] == "chat" && segments[2] == "completions";
    if (chat || (segments.size() == 2 && segments[1] == "completions")) {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleOpenAiGeneration(ctx, chat ? GenerationApi::kChat : GenerationApi::kCompletion,
                                    request, std::move(responder));
    }
    // Anthropic's Messages API (anthropic_handler.h).
    if (segments.size() == 2 && segments[1] == "messages") {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleAnthropicMessages(ctx, request, std::move(responder));
    }
    if (segments.size() == 2 && segments[1] == "embeddings") {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleOpenAiEmbeddings(ctx, request, std::move(responder));
    }
    if (segments.size() == 2 && segments[1] == "models") {
      return responder->Send(get ? HandleOpenAiModels(ctx) : MethodNotAllowed("GET"));
    }
    if (segments.size() == 3 && segments[1] == "models" && get &&
        segments[2].find(':') == std::string_view::npos) {
      return responder->Send(HandleOpenAiModel(ctx, segments[2]));
    }
  }

  if (segments.size() >= 3 && segments[0] == "v1" && segments[1] == "models") {
    std::string_view& last = segments.back();
    if (!last.ends_with(":predict")) return responder->Send(UnknownPath(request.path));
    last.remove_suffix(std::string_view(":predict").size());
    if (segments.size() == 5 && segments[3] == "labels") {
      absl::StatusOr<int64_t> version = ctx.models->ResolveLabel(segments[2], segments[4]);
      if (!version.ok()) return responder->Send(ErrorReply(version.status()));
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleTfServingPredict(ctx, ModelRef{segments[2], *version}, request,
                                    std::move(responder));
    }
    Segments tail;
    absl::StatusOr<ModelRef> ref = ParseModelRef(segments, 2, &tail);
    if (!ref.ok()) return responder->Send(ErrorReply(ref.status()));
    if (!tail.empty()) return responder->Send(UnknownPath(request.path));
    if (!post) return responder->Send(MethodNotAllowed("POST"));
    return HandleTfServingPredict(ctx, *ref, request, std::move(responder));
  }

  // Observability: GET /metrics, GET /dashboard[/data|/FILE], GET|POST /v2/logging.
  if (segments.size() == 1 && segments[0] == "metrics") {
    return responder->Send(get ? HandleMetrics(ctx) : MethodNotAllowed("GET"));
  }
  if (!segments.empty() && segments[0] == "dashboard" && segments.size() <= 2) {
    if (!get) return responder->Send(MethodNotAllowed("GET"));
    if (segments.size() == 2 && segments[1] == "data") {
      return responder->Send(HandleDashboardData(ctx));
    }
    return responder->Send(HandleDashboardFile(ctx, segments.size() == 2 ? segments[1] : ""));
  }
  if (segments.size() == 2 && segments[0] == "v2" && segments[1] == "logging") {
    if (get) return responder->Send(HandleGetLogging());
    if (post) return responder->Send(HandleSetLogging(request));
    return responder->Send(MethodNotAllowed("GET, POST"));
  }

  if (segments.empty() || segments[0] != "v2") return responder->Send(UnknownPath(request.path));

  if (segments.size() == 1) {
    return responder->Send(get ? HandleServerMetadata(ctx) : MethodNotAllowed("GET"));
  }
  if (segments.size() == 3 && segments[1] == "health") {
    if (!get) return responder->Send(MethodNotAllowed("GET"));
    if (segments[2] == "live") return responder->Send(HandleServerLive(ctx));
    if (segments[2] == "ready") return responder->Send(HandleServerReady(ctx));
  }
  if (segments[1] == "systemsharedmemory" || segments[1] == "cudasharedmemory") {
    return responder->Send(HandleSharedMemory(ctx, request, segments));
  }
  if (segments.size() == 3 && segments[1] == "repository" && segments[2] == "stats") {
    return responder->Send(get ? HandleRepositoryStats(ctx) : MethodNotAllowed("GET"));
  }
  if (segments.size() == 3 && segments[1] == "repository" && segments[2] == "index") {
    return responder->Send(post ? HandleRepositoryIndex(ctx) : MethodNotAllowed("POST"));
  }
  if (segments.size() == 5 && segments[1] == "repository" && segments[2] == "models") {
    const std::string_view name = segments[3];
    if (segments[4] == "load") {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleRepositoryLoad(ctx, name, std::move(responder));
    }
    if (segments[4] == "unload") {
      return responder->Send(post ? HandleRepositoryUnload(ctx, name) : MethodNotAllowed("POST"));
    }
    if (segments[4] == "traffic") {
      if (get) return responder->Send(HandleGetTraffic(ctx, name));
      if (post) return responder->Send(HandleSetTraffic(ctx, name, request));
      return responder->Send(MethodNotAllowed("GET, POST"));
    }
  }
  if (segments.size() == 3 && segments[1] == "models" && segments[2] == "stats") {
    return responder->Send(get ? HandleModelStats(ctx, std::nullopt) : MethodNotAllowed("GET"));
  }
  if (segments.size() >= 3 && segments[1] == "models") {
    Segments tail;
    absl::StatusOr<ModelRef> ref = ParseModelRef(segments, 2, &tail);
    if (!ref.ok()) return responder->Send(ErrorReply(ref.status()));
    if (tail.empty()) {
      return responder->Send(get ? HandleModelMetadata(ctx, *ref) : MethodNotAllowed("GET"));
    }
    if (tail.size() == 1 && tail[0] == "stats") {
      return responder->Send(get ? HandleModelStats(ctx, *ref) : MethodNotAllowed("GET"));
    }
    if (tail.size() == 1 && tail[0] == "config") {
      return responder->Send(get ? HandleModelConfig(ctx, *ref) : MethodNotAllowed("GET"));
    }
    if (tail.size() == 1 && tail[0] == "ready") {
      return responder->Send(get ? HandleModelReady(ctx, *ref) : MethodNotAllowed("GET"));
    }
    if (tail.size() == 1 && tail[0] == "chat_template") {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleChatTemplate(ctx, *ref, request, std::move(responder));
    }
    if (tail.size() == 1 && (tail[0] == "generate" || tail[0] == "generate_stream")) {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleKServeGenerate(ctx, *ref, tail[0] == "generate_stream", request,
                                  std::move(responder));
    }
    if (tail.size() == 1 && tail[0] == "infer") {
      if (!post) return responder->Send(MethodNotAllowed("POST"));
      return HandleModelInfer(ctx, *ref, request, std::move(responder));
    }
  }
  responder->Send(UnknownPath(request.path));
}

}  // namespace inferd
