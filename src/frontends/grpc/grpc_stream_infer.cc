#include "frontends/grpc/grpc_stream_infer.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "common/client_paths.h"
#include "frontends/grpc/grpc_access.h"
#include "frontends/grpc/grpc_generate_codec.h"
#include "frontends/grpc/grpc_infer_codec.h"
#include "frontends/grpc/grpc_inference.h"

namespace inferd {

// One generation of the stream: what its responses need after request_ is reused.
struct StreamInferReactor::Generation {
  std::unique_ptr<GenerateRequest> request;  // until it is handed to the model
  std::shared_ptr<std::atomic<bool>> cancelled;
  std::shared_ptr<TenantPermit> permit;
  bool stream = false;
  std::string prefix;  // the prompt, when it goes before a whole reply
  std::string text;    // a whole reply so far
  std::string id, model;
  int64_t version = 0;
};

StreamInferReactor::StreamInferReactor(const GrpcContext* ctx, std::string authorization)
    : ctx_(ctx), authorization_(std::move(authorization)) {
  StartRead(&request_);
}

void StreamInferReactor::OnReadDone(bool ok) {
  if (!ok) {  // the client closed its side (or the call was cancelled)
    MutexLock lock(&mu_);
    reads_done_ = true;
    MaybeFinish();
    return;
  }
  {
    MutexLock lock(&mu_);
    ++pending_;
  }
  // shared_ptr: the completion callback is a copyable std::function.
  auto response = std::make_shared<std::unique_ptr<inference::ModelStreamInferResponse>>(
      std::make_unique<inference::ModelStreamInferResponse>());
  AccessGrant grant;
  absl::Status allowed =
      CheckGrpcStreamMessage(*ctx_, authorization_, request_.model_name(), &grant);
  // Before the id is copied anywhere: every response, and every piece, would echo it.
  if (allowed.ok()) allowed = CheckGrpcRequestId(request_);
  if (!allowed.ok()) {
    if (grant.permit) grant.permit->Finish(allowed.code());
    (*response)->set_error_message(std::string(allowed.message()));
    Respond(std::move(*response));
    request_.Clear();
    StartRead(&request_);
    return;
  }
  if (absl::StatusOr<std::shared_ptr<const ModelConfig>> config =
          ctx_->inference->ConfigFor(request_.model_name());
      config.ok() && (*config)->backend == "llama") {
    Generate((*config)->name, (*config)->queue.default_timeout_us, std::move(grant));
    request_.Clear();
    StartRead(&request_);
    return;
  }
  inference::ModelInferResponse* infer = (*response)->mutable_infer_response();
  SubmitGrpcInference(
      *ctx_, request_, infer,
      [this, response, permit = grant.permit](const absl::Status& status) {
        if (permit) permit->Finish(status.code());
        if (!status.ok()) {
          (*response)->clear_infer_response();
          (*response)->set_error_message(WithoutServerPaths(std::string(status.message())));
        }
        Respond(std::move(*response));
      },
      grant);
  // The request was decoded (copied) during SubmitGrpcInference: the buffer can be reused.
  request_.Clear();
  StartRead(&request_);
}

void StreamInferReactor::Generate(std::string model, int64_t default_timeout_us,
                                  AccessGrant grant) {
  auto generation = std::make_shared<Generation>();
  generation->permit = std::move(grant.permit);
  generation->id = request_.id();
  generation->model = std::move(model);
  absl::StatusOr<std::optional<int64_t>> version = ParseGrpcVersion(request_.model_version());
  if (!version.ok()) return EndGeneration(*generation, version.status());
  absl::StatusOr<GrpcGeneration> decoded = DecodeGrpcGeneration(request_);
  if (!decoded.ok()) return EndGeneration(*generation, decoded.status());
  generation->stream = decoded->stream;
  if (decoded->prepend_input) generation->prefix = decoded->request->prompt;
  const int64_t timeout_us = decoded->timeout_us > 0 ? decoded->timeout_us : default_timeout_us;
  GenerateRequest& request = *decoded->request;
  if (timeout_us > 0) request.deadline = request.arrival + std::chrono::microseconds(timeout_us);
  generation->cancelled = request.cancelled;
  generation->request = std::move(decoded->request);
  {
    MutexLock lock(&mu_);
    if (cancelled_ || broken_) generation->cancelled->store(true, std::memory_order_release);
    generating_.insert(generation->cancelled);
  }
  ctx_->models->AcquireForInference(
      generation->model, *version, timeout_us,
      [this, generation](absl::StatusOr<ModelHandle> handle) {
        if (!handle.ok()) return EndGeneration(*generation, handle.status());
        generation->version = (*handle)->version();
        // The callback holds no model handle: the decode thread must not release the last
        // one (ServedModel counts the request in flight instead).
        generation->request->on_event = [this, generation](GenerationEvent event) {
          OnGenerationEvent(*generation, std::move(event));
        };
        (*handle)->Generate(std::move(generation->request));
      });
}

void StreamInferReactor::OnGenerationEvent(Generation& generation, GenerationEvent event) {
  if (!event.done) {
    if (!generation.stream) {
      generation.text += event.text;
      return;
    }
    auto response = std::make_unique<inference::ModelStreamInferResponse>();
    EncodeGrpcGeneration(generation.model, generation.version, generation.id, event.text, nullptr,
                         response->mutable_infer_response());
    {
      MutexLock lock(&mu_);
      ++pending_;  // a write beyond the request's last one
    }
    return Respond(std::move(response));
  }
  if (!event.status.ok()) return EndGeneration(generation, event.status);
  std::string text =
      generation.stream ? std::move(event.text) : generation.prefix + generation.text + event.text;
  auto response = std::make_unique<inference::ModelStreamInferResponse>();
  EncodeGrpcGeneration(generation.model, generation.version, generation.id, text, &event,
                       response->mutable_infer_response());
  EndGeneration(generation, absl::OkStatus());
  Respond(std::move(response));
}

void StreamInferReactor::EndGeneration(Generation& generation, const absl::Status& status) {
  if (generation.permit) generation.permit->Finish(status.code());
  generation.permit.reset();
  if (generation.cancelled) {
    MutexLock lock(&mu_);
    generating_.erase(generation.cancelled);
  }
  if (status.ok()) return;  // the caller writes the last response
  auto response = std::make_unique<inference::ModelStreamInferResponse>();
  response->set_error_message(WithoutServerPaths(std::string(status.message())));
  Respond(std::move(response));
}

void StreamInferReactor::CancelGenerations() {
  for (const auto& cancelled : generating_) cancelled->store(true, std::memory_order_release);
}

void StreamInferReactor::OnCancel() {
  MutexLock lock(&mu_);
  cancelled_ = true;
  CancelGenerations();
}

void StreamInferReactor::Respond(std::unique_ptr<inference::ModelStreamInferResponse> response) {
  MutexLock lock(&mu_);
  if (broken_) {
    --pending_;
    MaybeFinish();
    return;
  }
  writes_.push_back(std::move(response));
  if (!writing_) {
    writing_ = true;
    StartWrite(writes_.front().get());
  }
}

void StreamInferReactor::OnWriteDone(bool ok) {
  MutexLock lock(&mu_);
  writes_.pop_front();
  --pending_;
  if (!ok) {
    broken_ = true;
    CancelGenerations();
    pending_ -= static_cast<int>(writes_.size());
    writes_.clear();
  }
  if (!writes_.empty()) {
    StartWrite(writes_.front().get());
  } else {
    writing_ = false;
    MaybeFinish();
  }
}

void StreamInferReactor::MaybeFinish() {
  if (finished_ || !reads_done_ || pending_ > 0 || writing_) return;
  finished_ = true;
  Finish(grpc::Status::OK);
}

void StreamInferReactor::OnDone() { delete this; }

}  // namespace inferd
