// What the gRPC service shares with its handlers: what every frontend has
// (frontend_context.h) and the recorder HTTP's sessions hold themselves.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_
#define INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_

#include "frontends/frontend_context.h"
#include "observability/request_recorder.h"

namespace inferd {

struct GrpcContext : FrontendContext {
  // Records every ModelInfer outcome (metrics, access log) as HTTP requests are; optional.
  RequestRecorder* recorder = nullptr;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_
