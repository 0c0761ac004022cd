#include "frontends/http/routing/http_routes.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "frontends/http/handlers/anthropic_handler.h"
#include "frontends/http/handlers/dashboard_handler.h"
#include "frontends/http/handlers/generation_handlers.h"
#include "frontends/http/handlers/logging_handler.h"
#include "frontends/http/handlers/metrics_handler.h"
#include "frontends/http/handlers/model_config_handler.h"
#include "frontends/http/handlers/plain_predict_handler.h"
#include "frontends/http/handlers/repository_handlers.h"
#include "frontends/http/handlers/rerank_handler.h"
#include "frontends/http/handlers/shared_memory_handlers.h"
#include "frontends/http/handlers/stats_handler.h"
#include "frontends/http/handlers/tfserving_handler.h"

namespace inferd {
namespace {

constexpr Access kPublic = Access::kPublic;
constexpr Access kInference = Access::kInference;
constexpr Access kMonitoring = Access::kMonitoring;
constexpr Access kManagement = Access::kManagement;

// The answer of a path no handler serves; the fallback rows' handler.
void NotFound(RouteCall& call) { call.Reply(UnknownPathReply(call.request.path)); }

void Rerank(RouteCall& c) { HandleRerank(c.ctx, c.request, std::move(c.responder)); }

// Each row: pattern, methods, classes (read, write), handler, a path it answers.
constexpr HttpRoute kRoutes[] = {
    // Plain predict (plain_predict_handler.h): the model is ?model= or --default-model.
    {"/predict", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandlePlainPredict(c.ctx, c.request, std::move(c.responder)); }, "/predict",
     RouteModel::kQuery},
    // Rerank (rerank_handler.h) at the three paths llama.cpp's server answers it.
    {"/rerank", kPostMethod, kInference, kInference, Rerank, "/rerank"},
    {"/v1/rerank", kPostMethod, kInference, kInference, Rerank, "/v1/rerank"},
    {"/v2/rerank", kPostMethod, kInference, kInference, Rerank, "/v2/rerank"},

    // OpenAI-compatible generation and embeddings (generation_handlers.h); the model is in
    // the body.
    {"/v1/chat/completions", kPostMethod, kInference, kInference,
     [](RouteCall& c) {
       HandleOpenAiGeneration(c.ctx, GenerationApi::kChat, c.request, std::move(c.responder));
     },
     "/v1/chat/completions"},
    {"/v1/completions", kPostMethod, kInference, kInference,
     [](RouteCall& c) {
       HandleOpenAiGeneration(c.ctx, GenerationApi::kCompletion, c.request, std::move(c.responder));
     },
     "/v1/completions"},
    // Anthropic's Messages API (anthropic_handler.h).
    {"/v1/messages", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandleAnthropicMessages(c.ctx, c.request, std::move(c.responder)); },
     "/v1/messages"},
    {"/v1/embeddings", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandleOpenAiEmbeddings(c.ctx, c.request, std::move(c.responder)); },
     "/v1/embeddings"},
    {"/v1/models", kGetMethod, kInference, kInference,
     [](RouteCall& c) { c.Reply(HandleOpenAiModels(c.ctx)); }, "/v1/models"},
    {"/v1/models/{openai_model}", kGetMethod, kInference, kInference,
     [](RouteCall& c) { c.Reply(HandleOpenAiModel(c.ctx, c.ref.name)); }, "/v1/models/m",
     RouteModel::kPath, /*other_methods_not_found=*/true},

    // TF-Serving's predict (tfserving_handler.h): /v1/models/M[/versions/V|/labels/L]:predict.
    {"/v1/models/{model}/labels/{label}:predict", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandleTfServingPredict(c.ctx, c.ref, c.request, std::move(c.responder)); },
     "/v1/models/m/labels/stable:predict"},
    {"/v1/models/{ref}:predict", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandleTfServingPredict(c.ctx, c.ref, c.request, std::move(c.responder)); },
     "/v1/models/m/versions/2:predict"},
    {"/v1/models/{ref}/**:predict", kAnyMethod, kInference, kInference, NotFound,
     "/v1/models/m/versions/2/more:predict"},
    {"/v1/models/{model}/**", kAnyMethod, kInference, kInference, NotFound, "/v1/models/m/more"},

    // Observability: metrics, the dashboard, logging settings.
    {"/metrics", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleMetrics(c.ctx)); }, "/metrics"},
    {"/dashboard", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleDashboardFile(c.ctx, "")); }, "/dashboard"},
    {"/dashboard/data", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleDashboardData(c.ctx)); }, "/dashboard/data"},
    {"/dashboard/{name}", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleDashboardFile(c.ctx, c.name)); }, "/dashboard/app.js"},
    {"/dashboard/**", kAnyMethod, kMonitoring, kMonitoring, NotFound, "/dashboard/a/b"},
    {"/v2/logging", kGetOrPost, kMonitoring, kManagement,
     [](RouteCall& c) {
       c.Reply(c.request.method == HttpMethod::kGet ? HandleGetLogging()
                                                    : HandleSetLogging(c.request));
     },
     "/v2/logging"},

    // KServe v2 (kserve_handlers.h): server metadata and health.
    {"/v2", kGetMethod, kInference, kInference,
     [](RouteCall& c) { c.Reply(HandleServerMetadata(c.ctx)); }, "/v2"},
    {"/v2/health/{name}", kGetMethod, kPublic, kPublic,
     [](RouteCall& c) {
       if (c.name == "live") return c.Reply(HandleServerLive(c.ctx));
       if (c.name == "ready") return c.Reply(HandleServerReady(c.ctx));
       NotFound(c);
     },
     "/v2/health/live"},

    // Triton's shared-memory extension (shared_memory_handlers.h): registering makes the
    // server open a file on its host and write outputs into it.
    {"/v2/systemsharedmemory/**", kAnyMethod, kMonitoring, kManagement,
     [](RouteCall& c) { c.Reply(HandleSharedMemory(c.ctx, c.request, c.segments)); },
     "/v2/systemsharedmemory/status"},
    {"/v2/cudasharedmemory/**", kAnyMethod, kMonitoring, kManagement,
     [](RouteCall& c) { c.Reply(HandleSharedMemory(c.ctx, c.request, c.segments)); },
     "/v2/cudasharedmemory/status"},

    // The repository (repository_handlers.h, stats_handler.h).
    {"/v2/repository/stats", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleRepositoryStats(c.ctx)); }, "/v2/repository/stats"},
    {"/v2/repository/index", kPostMethod, kManagement, kManagement,
     [](RouteCall& c) { c.Reply(HandleRepositoryIndex(c.ctx)); }, "/v2/repository/index"},
    {"/v2/repository/models/{model}/load", kPostMethod, kManagement, kManagement,
     [](RouteCall& c) { HandleRepositoryLoad(c.ctx, c.ref.name, std::move(c.responder)); },
     "/v2/repository/models/m/load"},
    {"/v2/repository/models/{model}/unload", kPostMethod, kManagement, kManagement,
     [](RouteCall& c) { c.Reply(HandleRepositoryUnload(c.ctx, c.ref.name)); },
     "/v2/repository/models/m/unload"},
    {"/v2/repository/models/{model}/traffic", kGetOrPost, kMonitoring, kManagement,
     [](RouteCall& c) {
       c.Reply(c.request.method == HttpMethod::kGet
                   ? HandleGetTraffic(c.ctx, c.ref.name)
                   : HandleSetTraffic(c.ctx, c.ref.name, c.request));
     },
     "/v2/repository/models/m/traffic"},
    // Whatever else the repository API grows changes or lists the whole repository.
    {"/v2/repository/**", kAnyMethod, kManagement, kManagement, NotFound, "/v2/repository/x"},

    // A model (kserve_handlers.h, stats_handler.h, model_config_handler.h,
    // generation_handlers.h).
    {"/v2/models/stats", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleModelStats(c.ctx, std::nullopt)); }, "/v2/models/stats"},
    {"/v2/models/{ref}", kGetMethod, kInference, kInference,
     [](RouteCall& c) { c.Reply(HandleModelMetadata(c.ctx, c.ref)); }, "/v2/models/m"},
    {"/v2/models/{ref}/stats", kGetMethod, kMonitoring, kMonitoring,
     [](RouteCall& c) { c.Reply(HandleModelStats(c.ctx, c.ref)); },
     "/v2/models/m/versions/2/stats"},
    {"/v2/models/{ref}/config", kGetMethod, kInference, kInference,
     [](RouteCall& c) { c.Reply(HandleModelConfig(c.ctx, c.ref)); }, "/v2/models/m/config"},
    {"/v2/models/{ref}/ready", kGetMethod, kInference, kInference,
     [](RouteCall& c) { c.Reply(HandleModelReady(c.ctx, c.ref)); }, "/v2/models/m/ready"},
    {"/v2/models/{ref}/chat_template", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandleChatTemplate(c.ctx, c.ref, c.request, std::move(c.responder)); },
     "/v2/models/m/chat_template"},
    // The KServe generate extension.
    {"/v2/models/{ref}/generate", kPostMethod, kInference, kInference,
     [](RouteCall& c) {
       HandleKServeGenerate(c.ctx, c.ref, /*stream=*/false, c.request, std::move(c.responder));
     },
     "/v2/models/m/generate"},
    {"/v2/models/{ref}/generate_stream", kPostMethod, kInference, kInference,
     [](RouteCall& c) {
       HandleKServeGenerate(c.ctx, c.ref, /*stream=*/true, c.request, std::move(c.responder));
     },
     "/v2/models/m/versions/1/generate_stream"},
    {"/v2/models/{ref}/infer", kPostMethod, kInference, kInference,
     [](RouteCall& c) { HandleModelInfer(c.ctx, c.ref, c.request, std::move(c.responder)); },
     "/v2/models/m/versions/3/infer"},
    {"/v2/models/{ref}/**", kAnyMethod, kInference, kInference, NotFound, "/v2/models/m/explain"},
};

// kRoutes' patterns, parsed once, and its rows grouped by their first segment (a literal in
// every row): a request scans only the rows of its own first segment, in table order. Rows
// with different first segments never match the same path, so the grouping keeps the
// table's first-match order. A malformed pattern stops the server at its first request
// (route_table_test.cc stops it first).
struct CompiledRoutes {
  std::vector<RoutePattern> patterns;
  std::vector<std::pair<std::string_view, std::vector<uint8_t>>> by_first_segment;
};

const CompiledRoutes& Compiled() {
  static_assert(std::size(kRoutes) < 256, "row indices are uint8_t");
  static const CompiledRoutes* const compiled = [] {
    auto* out = new CompiledRoutes();
    for (size_t i = 0; i < std::size(kRoutes); ++i) {
      absl::StatusOr<RoutePattern> pattern = RoutePattern::Parse(kRoutes[i].pattern);
      if (pattern.ok() && pattern->first_literal().empty()) {
        pattern = absl::InvalidArgumentError(
            StrCat("'", kRoutes[i].pattern, "' must start with a literal segment"));
      }
      if (!pattern.ok()) {
        std::fprintf(stderr, "route table: %s\n", pattern.status().ToString().c_str());
        std::abort();
      }
      const std::string_view first = pattern->first_literal();
      out->patterns.push_back(*std::move(pattern));
      auto group = std::find_if(out->by_first_segment.begin(), out->by_first_segment.end(),
                                [&](const auto& g) { return g.first == first; });
      if (group == out->by_first_segment.end()) {
        group = out->by_first_segment.insert(group, {first, {}});
      }
      group->second.push_back(static_cast<uint8_t>(i));
    }
    return out;
  }();
  return *compiled;
}

uint8_t MethodBit(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet:
      return kGetMethod;
    case HttpMethod::kPost:
      return kPostMethod;
    case HttpMethod::kHead:
    case HttpMethod::kOther:
      break;
  }
  return 0;  // only a kAnyMethod row takes HEAD and the rest
}

}  // namespace

HttpReply UnknownPathReply(std::string_view path) {
  return ErrorReply(404,
                    StrCat("unknown path '", path, "' (see docs/http-api.md for the endpoints)"));
}

bool HttpRoute::Takes(HttpMethod method) const {
  return methods == kAnyMethod || (methods & MethodBit(method)) != 0;
}

std::string_view HttpRoute::Allow() const {
  if (methods == kGetMethod) return "GET";
  if (methods == kPostMethod) return "POST";
  return "GET, POST";
}

std::span<const HttpRoute> HttpRoutes() { return kRoutes; }

RouteMatch MatchHttpRoute(HttpMethod method, std::span<const std::string_view> path) {
  if (path.empty()) return RouteMatch{};
  const CompiledRoutes& compiled = Compiled();
  for (const auto& [first, rows] : compiled.by_first_segment) {
    if (first != path[0]) continue;
    RouteMatch match;
    for (const uint8_t row : rows) {
      const HttpRoute& route = kRoutes[row];
      const RoutePattern& pattern = compiled.patterns[row];
      if (!pattern.MayMatch(path)) continue;
      if (route.other_methods_not_found && !route.Takes(method)) continue;
      if (!pattern.Match(path, &match.captures)) continue;
      match.route = &route;
      match.pattern = &pattern;
      return match;
    }
    break;
  }
  return RouteMatch{};
}

}  // namespace inferd
