#include "frontends/grpc/grpc_inference.h"

#include <memory>
#include <string>
#include <utility>

#include "common/clock.h"
#include "frontends/grpc/grpc_infer_codec.h"
#include "observability/request_id.h"

namespace inferd {

namespace {

// One ModelInfer outcome for metrics and the access log. `model` is alive during the call
// (the caller holds a handle, or runs on the model's own execution thread).
void Record(RequestRecorder* recorder, const std::string& id, TimePoint received,
            const ServedModel* model, const absl::Status& status, int64_t batch_size) {
  if (recorder == nullptr) return;
  FinishedRequest finished;
  finished.request_id = id;
  finished.protocol = "grpc";
  finished.method = "ModelInfer";
  finished.model = model;
  finished.code = status.code();
  finished.latency = Clock::now() - received;
  finished.batch_size = batch_size;
  finished.error = std::string_view(status.message().data(), status.message().size());
  recorder->Finished(finished);
}

}  // namespace

void SubmitGrpcInference(const GrpcContext& ctx, const inference::ModelInferRequest& request,
                         inference::ModelInferResponse* response,
                         std::function<void(const absl::Status&)> done, int tenant_priority) {
  const TimePoint received = Clock::now();
  RequestRecorder* recorder = ctx.recorder;
  const std::string id = recorder != nullptr ? RequestIdFrom(request.id()) : request.id();
  auto fail = [&](const absl::Status& status) {
    Record(recorder, id, received, nullptr, status, 0);
    done(status);
  };
  absl::StatusOr<std::optional<int64_t>> version = ParseGrpcVersion(request.model_version());
  if (!version.ok()) return fail(version.status());
  // An unknown or broken model is reported before the request body is looked at.
  if (auto config = ctx.models->ConfigOf(request.model_name()); !config.ok()) {
    return fail(config.status());
  }
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeGrpcInferRequest(request);
  if (!decoded.ok()) return fail(decoded.status());
  (*decoded)->fallback_priority = tenant_priority;

  // As HTTP's AcquireAndSubmit: a lazy or evicted model loads first (bounded by the request's
  // timeout) on the manager's loader thread, never on a gRPC thread.
  const int64_t timeout_us = (*decoded)->timeout_us;
  auto pending = std::make_shared<std::unique_ptr<InferRequest>>(*std::move(decoded));
  ctx.models->AcquireForInference(
      request.model_name(), *version, timeout_us,
      [pending, response, recorder, id, received, reply_id = request.id(),
       done = std::move(done)](absl::StatusOr<ModelHandle> model) mutable {
        if (!model.ok()) {
          Record(recorder, id, received, nullptr, model.status(), 0);
          return done(model.status());
        }
        // The callback holds the name, not the handle: the last handle must never be
        // released on the model's own execution thread.
        ServedModel* served = model->get();
        (*pending)->on_complete = [name = served->name(), version = served->version(), served,
                                   response, recorder, id, received, reply_id,
                                   done = std::move(done)](InferResponse answer) {
          if (answer.status.ok())
            EncodeGrpcInferResponse(name, version, reply_id, answer, response);
          Record(recorder, id, received, served, answer.status, answer.batch_size);
          done(answer.status);
        };
        served->Infer(std::move(*pending));
      });
}

}  // namespace inferd
