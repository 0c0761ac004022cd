// What every frontend (HTTP, gRPC) needs from the server to answer requests: the one
// inference service, the models' lifecycle, the server's own state, who may call what, and
// the shared-memory regions. main builds one and each frontend extends it with what only it
// has (frontends/http/handler_context.h, frontends/grpc/grpc_context.h), so a new protocol
// starts from the same fields and a new shared field is added once.
#ifndef INFERD_FRONTENDS_FRONTEND_CONTEXT_H_
#define INFERD_FRONTENDS_FRONTEND_CONTEXT_H_

#include <atomic>
#include <string>

#include "auth/access_policy.h"
#include "core/repository/model_manager.h"
#include "core/service/inference_path.h"
#include "shm/shared_memory_registry.h"

namespace inferd {

struct FrontendContext {
  // Inference (tensors, generation, embeddings, rerank) and model metadata: the one door.
  InferencePath* inference = nullptr;
  // Readiness, statistics and the repository API (load, unload, index); never inference.
  ModelManager* models = nullptr;
  std::string server_version;
  // Set once shutdown begins: readiness turns false so load balancers stop sending traffic.
  const std::atomic<bool>* draining = nullptr;
  // Who may do what (API keys, roles, tenants); null: everyone may do everything.
  const AccessPolicy* access = nullptr;
  // The system shared-memory regions clients registered; null: the extension is off.
  SharedMemoryRegistry* shared_memory = nullptr;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_FRONTEND_CONTEXT_H_
