#include "frontends/grpc/grpc_inference.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "auth/key_ring.h"
#include "auth/tenant.h"
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
                         std::function<void(const absl::Status&)> done, const AccessGrant& caller,
                         std::shared_ptr<std::atomic<bool>> cancelled) {
  const TimePoint received = Clock::now();
  RequestRecorder* recorder = ctx.recorder;
  // Before the id is copied below (and into the reply): its length is the client's to choose.
  // An over-long one is recorded under an id of the server's.
  const absl::Status id_ok = CheckGrpcRequestId(request);
  std::string id = !id_ok.ok()           ? NewRequestId()
                   : recorder != nullptr ? RequestIdFrom(request.id())
                                         : request.id();
  auto fail = [&](const absl::Status& status) {
    Record(recorder, id, received, nullptr, status, 0);
    done(status);
  };
  if (!id_ok.ok()) return fail(id_ok);
  absl::StatusOr<std::optional<int64_t>> version = ParseGrpcVersion(request.model_version());
  if (!version.ok()) return fail(version.status());
  // An unknown or broken model is reported before the request body is looked at.
  if (auto config = ctx.inference->ConfigFor(request.model_name()); !config.ok()) {
    return fail(config.status());
  }
  // The caller's tensors reach its own tenant's regions only (shared_memory_registry.h).
  std::optional<SharedMemoryScope> scope;
  if (ctx.shared_memory != nullptr) {
    scope.emplace(*ctx.shared_memory,
                  TenantOwner(caller.key != nullptr ? caller.key->tenant : nullptr));
  }
  SharedMemoryOutputs shared_outputs;
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      DecodeGrpcInferRequest(request, scope ? &*scope : nullptr, &shared_outputs);
  if (!decoded.ok()) return fail(decoded.status());
  (*decoded)->fallback_priority = caller.priority;
  if (caller.key != nullptr && caller.key->tenant != nullptr) {
    (*decoded)->tenant = caller.key->tenant->name();
  }
  (*decoded)->cancelled = std::move(cancelled);

  // The version the request reached, seen from the acquiring thread: a weak reference, so
  // that no handle is ever released on the model's execution thread (a version's last handle
  // released there would wait for itself). The execution thread turns it into a handle only
  // to hand the answer over, and the completion pool releases that.
  auto reached = std::make_shared<std::weak_ptr<ServedModel>>();
  auto finish = [response, recorder, id = std::move(id), received, reply_id = request.id(),
                 shared_outputs = std::move(shared_outputs),
                 done = std::move(done)](const ServedModel* model, InferResponse answer) mutable {
    if (model != nullptr && answer.status.ok() && !shared_outputs.empty()) {
      answer.status = shared_outputs.WriteAll(answer);
    }
    if (model != nullptr && answer.status.ok()) {
      EncodeGrpcInferResponse(model->name(), model->version(), reply_id, answer, response,
                              &shared_outputs);
    }
    Record(recorder, id, received, model, answer.status, answer.batch_size);
    done(answer.status);
  };
  InferCallbacks callbacks;
  if (ctx.completions != nullptr) {
    callbacks.acquired = [reached](const ModelHandle& model) { *reached = model; };
  }
  callbacks.done = [completions = ctx.completions, reached, finish = std::move(finish)](
                       const ServedModel* model, InferResponse answer) mutable {
    // Handed over only while other requests of this model are waiting: then the execution
    // thread's time is theirs. With none waiting, nothing waits for this thread, and
    // finishing here saves the hop to the pool, a wake-up on the one-client latency. A
    // request refused before it reached a version (model null) is answered here too, on the
    // thread that refused it, a frontend's or the loader's.
    ModelHandle handle;
    if (completions != nullptr && model != nullptr && model->in_flight() > 0) {
      handle = reached->lock();  // null once the version is being destroyed
    }
    if (handle == nullptr) return finish(model, std::move(answer));
    boost::asio::post(*completions, [handle = std::move(handle), finish = std::move(finish),
                                     answer = std::move(answer)]() mutable {
      finish(handle.get(), std::move(answer));
    });
  };
  ctx.inference->Submit(request.model_name(), *version, *std::move(decoded), std::move(callbacks));
}

}  // namespace inferd
