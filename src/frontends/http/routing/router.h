// Maps a method and path to its handler, through the route table (http_routes.h). Paths:
//   GET  /v2, /v2/health/live, /v2/health/ready
//   GET  /v2/models/M[/versions/V], /v2/models/M[/versions/V]/ready
//   POST /v2/models/M[/versions/V]/infer, /v2/repository/index
//   POST /v2/repository/models/M/load|unload, GET|POST /v2/repository/models/M/traffic,
//   GET  /v2/repository/stats
//   POST /predict[?model=M]
//   POST /v1/models/M[/versions/V|/labels/L]:predict
//   POST /v1/chat/completions, /v1/completions; GET /v1/models[/M] (OpenAI-compatible)
//   POST /v1/messages (Anthropic's Messages API)
//   POST /v2/models/M[/versions/V]/generate|generate_stream (KServe generate extension)
//   GET  /metrics, /dashboard[/data|/FILE]; GET|POST /v2/logging
// Access control happens here, at the entry, before any handler: each request is classified
// (route_access.h) and checked against the AccessPolicy; refused requests never reach a
// handler and change nothing. The session asks first, from the header alone, before it
// reads a body (RefuseBeforeBody), so an unauthenticated client cannot make the server
// buffer its body; Dispatch checks again with the tenant's limits and takes its slot.
// Each request's path is split and matched once; dispatch and classification read the same
// match. Thread-safety: Dispatch is const and safe from every I/O thread.
#ifndef INFERD_FRONTENDS_HTTP_ROUTING_ROUTER_H_
#define INFERD_FRONTENDS_HTTP_ROUTING_ROUTER_H_

#include <optional>
#include <span>
#include <string_view>

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"
#include "frontends/http/routing/http_routes.h"

namespace inferd {

class HttpRouter {
 public:
  explicit HttpRouter(HandlerContext context) : context_(std::move(context)) {}

  // Answers through `responder`, now or (for inference) once the model has run.
  void Dispatch(const HttpRequestView& request, ResponderPtr responder) const;

  // The refusal (401, 403) of a request whose key or role does not allow its route, judged
  // from `head` (a request without its body); nullopt when it may go on. Takes no tenant
  // slot and counts nothing: Dispatch does, once.
  std::optional<HttpReply> RefuseBeforeBody(const HttpRequestView& head) const;

 private:
  // The request's route class (route_access.h) and, for management, whether its client is
  // local (the keyless rule asks).
  RouteAccess Classify(const HttpRequestView& request, const RouteMatch& match) const;

  // Runs `match`'s handler: resolves the path's model version or label (400, 404), then
  // checks the method (405).
  void Serve(const HttpRequestView& request, const RouteMatch& match,
             std::span<const std::string_view> segments, ResponderPtr responder) const;

  const HandlerContext context_;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_ROUTING_ROUTER_H_
