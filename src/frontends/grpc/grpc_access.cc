#include "frontends/grpc/grpc_access.h"

#include <string>
#include <utility>

namespace inferd {

std::string_view GrpcAuthorization(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) return {};
  return std::string_view(found->second.data(), found->second.size());
}

namespace {

std::string_view Metadata(const grpc::CallbackServerContext& context, std::string_view key) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (found == metadata.end()) return {};
  return std::string_view(found->second.data(), found->second.size());
}

// The IP address of gRPC's peer string: "ipv4:127.0.0.1:5000", "ipv6:[::1]:5000" (newer
// gRPC writes the brackets as %5B and %5D); "" for anything else (a Unix socket).
std::string PeerAddress(const std::string& peer) {
  std::string_view text(peer);
  if (text.starts_with("ipv4:")) {
    text.remove_prefix(5);
    return std::string(text.substr(0, text.rfind(':')));
  }
  if (!text.starts_with("ipv6:")) return {};
  text.remove_prefix(5);
  for (const auto& [open, close] :
       {std::pair<std::string_view, std::string_view>{"[", "]"}, {"%5B", "%5D"}}) {
    if (!text.starts_with(open)) continue;
    const size_t end = text.find(close);
    if (end == std::string_view::npos) return {};
    return std::string(text.substr(open.size(), end - open.size()));
  }
  return {};
}

}  // namespace

absl::Status CheckGrpcAccess(const GrpcContext& ctx, grpc::CallbackServerContext* context,
                             const RouteAccess& route, AccessGrant* grant) {
  if (ctx.access == nullptr || !ctx.access->enforcing()) return absl::OkStatus();
  RouteAccess judged = route;
  if (route.access == Access::kManagement) {
    // A proxy (nginx's grpc_pass) relays anyone from loopback: as for HTTP, a forwarding
    // header makes the client remote unless the proxy is trusted.
    const ForwardingHeaders forwarding{Metadata(*context, "forwarded"),
                                       Metadata(*context, "x-forwarded-for"),
                                       Metadata(*context, "x-real-ip")};
    judged.local_client = ctx.access->IsLocalClient(PeerAddress(context->peer()), forwarding);
  }
  AccessDenial denial;
  absl::Status allowed = ctx.access->Check(judged, GrpcAuthorization(*context), grant, &denial);
  if (absl::IsResourceExhausted(allowed)) {
    context->AddTrailingMetadata("retry-after", std::to_string(denial.retry_after_s));
  }
  return allowed;
}

absl::Status CheckGrpcStreamMessage(const GrpcContext& ctx, std::string_view authorization,
                                    std::string_view model, AccessGrant* grant) {
  if (ctx.access == nullptr || !ctx.access->enforcing()) return absl::OkStatus();
  AccessDenial denial;
  return ctx.access->Check(RouteAccess::ForModel(model), authorization, grant, &denial);
}

}  // namespace inferd
