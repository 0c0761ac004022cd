// Access control for gRPC calls: the same AccessPolicy as HTTP, fed from the call's
// `authorization` metadata. Every RPC of InferenceService calls CheckGrpcAccess first (the
// callback API has no per-method hook that can refuse a call with a status of our choosing:
// AuthMetadataProcessor needs TLS credentials and does not see the method's request).
#ifndef INFERD_FRONTENDS_GRPC_GRPC_ACCESS_H_
#define INFERD_FRONTENDS_GRPC_GRPC_ACCESS_H_

#include <string>
#include <string_view>

#include <grpcpp/server_context.h>

#include "absl/status/status.h"
#include "auth/access_policy.h"
#include "frontends/grpc/grpc_context.h"

namespace inferd {

// The call's `authorization` metadata value, "" when absent.
std::string_view GrpcAuthorization(const grpc::CallbackServerContext& context);

// OK with `grant` filled (or nothing to check), else the status to finish the call with:
// UNAUTHENTICATED, PERMISSION_DENIED, or RESOURCE_EXHAUSTED with a `retry-after` trailing
// metadata entry (seconds) set on `context`.
absl::Status CheckGrpcAccess(const GrpcContext& ctx, grpc::CallbackServerContext* context,
                             const RouteAccess& route, AccessGrant* grant);

// The same for one message of a stream, whose call was already authenticated at its start.
absl::Status CheckGrpcStreamMessage(const GrpcContext& ctx, std::string_view authorization,
                                    std::string_view model, AccessGrant* grant);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_ACCESS_H_
