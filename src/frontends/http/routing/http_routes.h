// The HTTP endpoints, written once: each route's method(s), path pattern (route_pattern.h),
// access class and handler. The router dispatches from this table and access control
// classifies from it (route_access.h), so a new endpoint is one new row, and it cannot be
// served without a class: every row must name one (route_table_test.cc walks them all).
//
// A path no row matches is answered 404 and classed inference: a caller needs a key with
// some role to learn that a path does not exist (docs/security.md). Rows ending in ** are
// a family's fallback: an unknown path under /v2/repository stays management, one under
// /v2/models/M stays M's, and its malformed version is still a 400.
//
// Thread-safety: the table is immutable; its patterns are parsed once, on first use
// (thread-safe static initialisation).
#ifndef INFERD_FRONTENDS_HTTP_ROUTING_HTTP_ROUTES_H_
#define INFERD_FRONTENDS_HTTP_ROUTING_HTTP_ROUTES_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "auth/roles.h"
#include "frontends/http/handler_context.h"
#include "frontends/http/handlers/kserve_handlers.h"
#include "frontends/http/http_types.h"
#include "frontends/http/routing/route_pattern.h"

namespace inferd {

// A set of HTTP methods as bits.
enum MethodBits : uint8_t {
  kGetMethod = 1,
  kPostMethod = 2,
  kGetOrPost = kGetMethod | kPostMethod,
  kAnyMethod = 0xff,  // the handler answers every method itself (405 included)
};

// What a route's handler is given: the request, where to answer, and the path's captures,
// resolved (a {ref}'s version parsed, a {label} looked up). Views into the request's path.
struct RouteCall {
  const HandlerContext& ctx;
  const HttpRequestView& request;
  ResponderPtr responder;
  ModelRef ref;                                // {model}, {openai_model}, {ref}, {label}
  std::string_view name;                       // {name}
  std::span<const std::string_view> segments;  // the whole path, split

  void Reply(HttpReply reply) { responder->Send(std::move(reply)); }
};
using RouteHandler = void (*)(RouteCall& call);

// Where an inference route's model comes from, for access control (keys restricted to
// some models). kPath: the pattern's {model}/{ref}; a route without one names its model in
// the body and is checked once the body is parsed.
enum class RouteModel : uint8_t { kPath, kQuery };

struct HttpRoute {
  std::string_view pattern;
  uint8_t methods;  // MethodBits; another method is answered 405 with an Allow header
  Access read;      // the class of GET and HEAD
  Access write;     // the class of every other method
  RouteHandler handler;
  // A path this row answers: route_table_test.cc checks that it reaches this row.
  std::string_view example;
  RouteModel model = RouteModel::kPath;
  // A method this row does not take means "not this row" (the scan goes on, usually to
  // a 404) instead of a 405: GET /v1/models/M is OpenAI's lookup, POST there is nothing.
  bool other_methods_not_found = false;

  bool Takes(HttpMethod method) const;
  // The Allow header of a 405: "GET", "POST", "GET, POST".
  std::string_view Allow() const;
};

// Every row, in match order: the first whose pattern (and, for other_methods_not_found,
// method) matches wins.
std::span<const HttpRoute> HttpRoutes();

// A request's row (null: no row, an unknown path) and what its pattern captured.
struct RouteMatch {
  const HttpRoute* route = nullptr;
  const RoutePattern* pattern = nullptr;
  PathCaptures captures;
};
RouteMatch MatchHttpRoute(HttpMethod method, std::span<const std::string_view> path);

// The 404 of a path no route serves.
HttpReply UnknownPathReply(std::string_view path);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_ROUTING_HTTP_ROUTES_H_
