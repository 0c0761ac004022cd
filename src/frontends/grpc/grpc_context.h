// What the gRPC service shares with its handlers: the models and the server's own state.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_
#define INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_

#include <atomic>
#include <string>

#include "auth/access_policy.h"
#include "core/repository/model_manager.h"
#include "core/service/inference_path.h"
#include "observability/request_recorder.h"
#include "shm/shared_memory_registry.h"

namespace inferd {

struct GrpcContext {
  // Inference and model metadata: the path every protocol shares.
  InferencePath* inference = nullptr;
  // Readiness, statistics and the repository API.
  ModelManager* models = nullptr;
  std::string server_version;
  // Set once shutdown begins: ServerReady turns false (as HTTP's /v2/health/ready does).
  const std::atomic<bool>* draining = nullptr;
  // Records every ModelInfer outcome (metrics, access log) as HTTP requests are; optional.
  RequestRecorder* recorder = nullptr;
  // Who may call what (frontends/grpc/grpc_access.h); null: everyone may call everything.
  const AccessPolicy* access = nullptr;
  // The system shared-memory regions clients registered; null: the extension is off.
  SharedMemoryRegistry* shared_memory = nullptr;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_
