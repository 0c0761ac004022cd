#include "frontends/grpc/grpc_access.h"

#include <string>

namespace inferd {

std::string_view GrpcAuthorization(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) return {};
  return std::string_view(found->second.data(), found->second.size());
}

absl::Status CheckGrpcAccess(const GrpcContext& ctx, grpc::CallbackServerContext* context,
                             const RouteAccess& route, AccessGrant* grant) {
  if (ctx.access == nullptr || !ctx.access->enforcing()) return absl::OkStatus();
  AccessDenial denial;
  absl::Status allowed = ctx.access->Check(route, GrpcAuthorization(*context), grant, &denial);
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
