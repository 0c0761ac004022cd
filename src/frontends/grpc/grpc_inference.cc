#include "frontends/grpc/grpc_inference.h"

#include <memory>
#include <string>
#include <utility>

#include "frontends/grpc/grpc_infer_codec.h"

namespace inferd {

void SubmitGrpcInference(const GrpcContext& ctx, const inference::ModelInferRequest& request,
                         inference::ModelInferResponse* response,
                         std::function<void(const absl::Status&)> done) {
  absl::StatusOr<std::optional<int64_t>> version = ParseGrpcVersion(request.model_version());
  if (!version.ok()) return done(version.status());
  absl::StatusOr<ModelHandle> model = ctx.models->Acquire(request.model_name(), *version);
  if (!model.ok()) return done(model.status());
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeGrpcInferRequest(request);
  if (!decoded.ok()) return done(decoded.status());

  // The callback holds the name, not the handle: the last handle must never be released on
  // the model's own execution thread.
  (*decoded)->on_complete = [name = (*model)->name(), version = (*model)->version(), response,
                             id = request.id(), done = std::move(done)](InferResponse answer) {
    if (answer.status.ok()) EncodeGrpcInferResponse(name, version, id, answer, response);
    done(answer.status);
  };
  (*model)->Infer(*std::move(decoded));
}

}  // namespace inferd
