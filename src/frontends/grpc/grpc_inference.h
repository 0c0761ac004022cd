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
// must stay valid until then), on a thread of `ctx.completions` (inline on the thread that
// answered when it is null). `request` is read only during this call. Nothing here waits for
// the model, so a gRPC thread is never blocked on it, and the model's execution thread only
// posts the answer: shared-memory outputs, the copy into `response` and the access log run on
// the completion pool (serialization on gRPC's threads once `done` finishes the call). `caller`:
// what the access check granted (its tenant's default queue priority, the owner of the
// shared-memory regions its tensors may name, and the tenant whose cached state its requests may
// share); the default is a caller without keys or tenant. An id over kMaxClientIdBytes is refused
// first, before anything is copied, loaded or queued. `cancelled`, when given, is set when the
// client goes away (a generative model's infer then stops generating).
void SubmitGrpcInference(const GrpcContext& ctx, const inference::ModelInferRequest& request,
                         inference::ModelInferResponse* response,
                         std::function<void(const absl::Status&)> done,
                         const AccessGrant& caller = {},
                         std::shared_ptr<std::atomic<bool>> cancelled = nullptr);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_INFERENCE_H_
