// The inference path shared by ModelInfer and ModelStreamInfer: decode, acquire the model,
// and hand the request to ServedModel::Infer (the same validation and scheduling as HTTP).
#ifndef INFERD_FRONTENDS_GRPC_GRPC_INFERENCE_H_
#define INFERD_FRONTENDS_GRPC_GRPC_INFERENCE_H_

#include <atomic>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "auth/access_policy.h"
#include "frontends/grpc/grpc_context.h"
#include "inference_service.pb.h"

namespace inferd {

// Calls `done` exactly once: with an error at once when the request is malformed or the model
// unknown or not ready, otherwise once the model has answered, after filling `response` (which
// must stay valid until then). `request` is read only during this call. Nothing here waits for
// the model, so a gRPC thread is never blocked on it.
//
// Which thread finishes an answer (writes shared-memory outputs, copies the outputs into
// `response`, records the request, calls `done`; gRPC serialises on its own threads after):
// while other requests of the model wait, the execution thread only hands the answer to
// `ctx.completions` and goes on to them; with none waiting (or no pool), the thread that
// answered finishes it, as nothing waits for that thread and the hop costs a wake-up.
//
// `caller`: what the access check granted (its tenant's default queue priority, the owner of
// the shared-memory regions its tensors may name, and the tenant whose cached state its
// requests may share); the default is a caller without keys or tenant. An id over
// kMaxClientIdBytes is refused first, before anything is copied, loaded or queued.
// `cancelled`, when given, is set when the client goes away (a generative model's infer then
// stops generating).
void SubmitGrpcInference(const GrpcContext& ctx, const inference::ModelInferRequest& request,
                         inference::ModelInferResponse* response,
                         std::function<void(const absl::Status&)> done,
                         const AccessGrant& caller = {},
                         std::shared_ptr<std::atomic<bool>> cancelled = nullptr);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_INFERENCE_H_
