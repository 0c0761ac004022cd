#include "frontends/grpc/grpc_infer_queues.h"

#include <utility>

#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>
#include <spdlog/spdlog.h>

#include "frontends/grpc/grpc_access.h"
#include "frontends/grpc/grpc_inference.h"
#include "frontends/grpc/grpc_status.h"

namespace inferd {
namespace {

// One ModelInfer call from the moment it is posted to wait for a client until its reply is
// sent. Its tag comes back from the queue twice: when a request arrived (or the server shuts
// down), and when the reply has gone out. It deletes itself after the second.
class InferCall {
 public:
  InferCall(GrpcInferQueues* queues, grpc::ServerCompletionQueue* queue)
      : queues_(queues), queue_(queue), responder_(&context_) {
    queues_->service()->RequestModelInfer(&context_, &request_, &responder_, queue_, queue_, this);
  }

  // On the polling thread, with the queue's `ok` for this tag.
  void Proceed(bool ok) {
    if (replied_ || !ok) {  // the reply went out, or no request will come (shutdown)
      if (started_) queues_->CallEnded();
      delete this;
      return;
    }
    started_ = true;
    queues_->CallStarted();
    if (!queues_->stopping()) new InferCall(queues_, queue_);  // the next client's call
    Run();
  }

 private:
  void Run() {
    const GrpcContext& ctx = queues_->service()->context();
    AccessGrant grant;
    if (absl::Status allowed =
            CheckGrpcAccess(ctx, &context_, RouteAccess::ForModel(request_.model_name()), &grant);
        !allowed.ok()) {
      return Reply(allowed);
    }
    // `done` runs on the model's execution thread (or here, for a request refused before
    // it reached one); Finish may be called from any thread.
    SubmitGrpcInference(
        ctx, request_, &response_,
        [this, permit = std::move(grant.permit)](const absl::Status& status) {
          if (permit) permit->Finish(status.code());
          Reply(status);
        },
        grant.priority);
  }

  void Reply(const absl::Status& status) {
    replied_ = true;
    if (status.ok()) {
      responder_.Finish(response_, grpc::Status::OK, this);
    } else {
      responder_.FinishWithError(ToGrpcStatus(status), this);
    }
  }

  GrpcInferQueues* const queues_;
  grpc::ServerCompletionQueue* const queue_;
  grpc::ServerContext context_;
  inference::ModelInferRequest request_;
  inference::ModelInferResponse response_;
  grpc::ServerAsyncResponseWriter<inference::ModelInferResponse> responder_;
  bool started_ = false;
  bool replied_ = false;
};

}  // namespace

GrpcInferQueues::GrpcInferQueues(InferenceService* service, int threads)
    : service_(service), threads_(threads > 0 ? threads : 1) {}

GrpcInferQueues::~GrpcInferQueues() {
  if (!pollers_.empty()) Shutdown(std::chrono::system_clock::now());
}

void GrpcInferQueues::AddTo(grpc::ServerBuilder& builder) {
  for (int i = 0; i < threads_; ++i) queues_.push_back(builder.AddCompletionQueue());
}

void GrpcInferQueues::Start() {
  for (const auto& queue : queues_) {
    for (int i = 0; i < kCallsPerQueue; ++i) new InferCall(this, queue.get());
    pollers_.emplace_back([this, queue = queue.get()] { Poll(queue); });
  }
}

void GrpcInferQueues::Poll(grpc::ServerCompletionQueue* queue) {
  void* tag = nullptr;
  bool ok = false;
  while (queue->Next(&tag, &ok)) static_cast<InferCall*>(tag)->Proceed(ok);
}

void GrpcInferQueues::CallStarted() {
  MutexLock lock(&mu_);
  ++in_flight_;
}

void GrpcInferQueues::CallEnded() {
  MutexLock lock(&mu_);
  if (--in_flight_ == 0) idle_.NotifyAll();
}

void GrpcInferQueues::Shutdown(std::chrono::system_clock::time_point deadline) {
  stopping_.store(true, std::memory_order_release);
  const auto wait = std::max(deadline - std::chrono::system_clock::now(),
                             std::chrono::system_clock::duration::zero());
  bool idle = false;
  {
    MutexLock lock(&mu_);
    idle = idle_.WaitUntil(&mu_, std::chrono::steady_clock::now() + wait,
                           [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; });
  }
  if (!idle) {
    // A reply still to come would be queued on a shut-down queue: leave the queues running.
    spdlog::warn("gRPC: ModelInfer calls still waiting on a model at shutdown; not waiting longer");
    for (std::thread& poller : pollers_) poller.detach();
    pollers_.clear();
    for (auto& queue : queues_) (void)queue.release();
    queues_.clear();
    return;
  }
  for (const auto& queue : queues_) queue->Shutdown();
  for (std::thread& poller : pollers_) poller.join();
  pollers_.clear();
}

}  // namespace inferd
