#include "frontends/http/routing/router.h"

#include <string>

#include "common/strings.h"
#include "core/config/version_dirs.h"
#include "frontends/http/codecs/error_shape.h"
#include "frontends/http/routing/access_reply.h"
#include "frontends/http/routing/route_access.h"

namespace inferd {
namespace {

// The request's credentials as an Authorization value: the header, or else Anthropic's
// x-api-key header (its SDKs send the key there) as "Bearer <key>".
std::string Credentials(const HttpRequestView& request) {
  const std::string_view authorization = request.Header("Authorization");
  if (!authorization.empty()) return std::string(authorization);
  const std::string_view api_key = request.Header("x-api-key");
  if (api_key.empty()) return {};
  return StrCat("Bearer ", api_key);
}

// The model (and version) the path names: a {ref}'s "versions/V" must be a version number,
// a {label} must be one of the model's labels.
absl::StatusOr<ModelRef> ResolveModel(const ModelManager& models, const RoutePattern& pattern,
                                      const PathCaptures& captures) {
  ModelRef ref{captures.model, std::nullopt};
  if (pattern.has_label()) {
    absl::StatusOr<int64_t> version = models.ResolveLabel(captures.model, captures.label);
    if (!version.ok()) return version.status();
    ref.version = *version;
  }
  if (captures.missing_version) {
    return absl::InvalidArgumentError("missing version after /versions/");
  }
  if (captures.has_version) {
    ref.version = ParseVersionDirName(captures.version);
    if (!ref.version) {
      return absl::InvalidArgumentError(StrCat("'", captures.version, "' is not a version number"));
    }
  }
  return ref;
}

}  // namespace

RouteAccess HttpRouter::Classify(const HttpRequestView& request, const RouteMatch& match) const {
  RouteAccess route = RouteAccessOf(match, request.method, request.query,
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
  const PathSegments segments = SplitPath(head.path);
  const RouteMatch match = MatchHttpRoute(head.method, segments);
  absl::StatusOr<const ApiKey*> key =
      access->Authenticate(Classify(head, match), Credentials(head));
  if (key.ok()) return std::nullopt;
  return InPathErrorShape(head.path, AccessDeniedReply(AccessDenial{key.status()}));
}

void HttpRouter::Dispatch(const HttpRequestView& request, ResponderPtr responder) const {
  // Every error in its path's shape, the access check's included (error_shape.h).
  responder = WithErrorShape(ErrorShapeOf(request.path), std::move(responder));
  // One split and one match for both the access check and the handler.
  const PathSegments segments = SplitPath(request.path);
  const RouteMatch match = MatchHttpRoute(request.method, segments);
  const AccessPolicy* access = context_.access;
  if (access == nullptr || !access->enforcing()) {
    return Serve(request, match, segments, std::move(responder));
  }
  AccessGrant grant;
  AccessDenial denial;
  if (!access->Check(Classify(request, match), Credentials(request), &grant, &denial).ok()) {
    return responder->Send(AccessDeniedReply(denial));
  }
  if (grant.permit) responder = WithTenantPermit(std::move(responder), std::move(grant.permit));
  Tenant* tenant = grant.key != nullptr ? grant.key->tenant : nullptr;
  if (grant.priority > 0 || tenant != nullptr) {
    HttpRequestView with_tenant = request;
    with_tenant.tenant_priority = grant.priority;
    with_tenant.tenant = tenant;
    return Serve(with_tenant, match, segments, std::move(responder));
  }
  Serve(request, match, segments, std::move(responder));
}

void HttpRouter::Serve(const HttpRequestView& request, const RouteMatch& match,
                       std::span<const std::string_view> segments, ResponderPtr responder) const {
  if (match.route == nullptr) return responder->Send(UnknownPathReply(request.path));
  // The path's model first: a malformed version is a 400 whatever the method.
  absl::StatusOr<ModelRef> ref = ResolveModel(*context_.models, *match.pattern, match.captures);
  if (!ref.ok()) return responder->Send(ErrorReply(ref.status()));
  if (!match.route->Takes(request.method)) {
    return responder->Send(MethodNotAllowed(match.route->Allow()));
  }
  RouteCall call{context_, request, std::move(responder), *ref, match.captures.name, segments};
  match.route->handler(call);
}

}  // namespace inferd
