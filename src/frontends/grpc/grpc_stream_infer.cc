#include "frontends/grpc/grpc_stream_infer.h"

#include <optional>
#include <string>
#include <utility>

#include "auth/key_ring.h"
#include "auth/tenant.h"
#include "common/client_paths.h"
#include "common/strings.h"
#include "frontends/grpc/grpc_access.h"
#include "frontends/grpc/grpc_generate_codec.h"
#include "frontends/grpc/grpc_infer_codec.h"
#include "frontends/grpc/grpc_inference.h"

namespace inferd {

// One generation of the stream: what its responses need after request_ is reused.
struct StreamInferReactor::Generation {
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
    reading_ = false;
    reads_done_ = true;
    MaybeFinish();
    return;
  }
  {
    MutexLock lock(&mu_);
    if (broken_) {  // cut, or the client is gone: nothing more is served or read
      request_.Clear();
      reading_ = false;
      MaybeFinish();
      return;
    }
    ++callbacks_;
    writes_.RequestRead();
  }
  AccessGrant grant;
  absl::Status allowed =
      CheckGrpcStreamMessage(*ctx_, authorization_, request_.model_name(), &grant);
  // Before the id is copied anywhere: every response, and every piece, would echo it.
  if (allowed.ok()) allowed = CheckGrpcRequestId(request_);
  if (!allowed.ok()) {
    if (grant.permit) grant.permit->Finish(allowed.code());
    Refuse(allowed);
  } else if (absl::StatusOr<std::shared_ptr<const ModelConfig>> config =
                 ctx_->inference->ConfigFor(request_.model_name());
             config.ok() && (*config)->capabilities.generates_text) {
    Generate((*config)->name, std::move(grant));
  } else {
    // shared_ptr: the completion callback is a copyable std::function.
    auto response = std::make_shared<std::unique_ptr<inference::ModelStreamInferResponse>>(
        std::make_unique<inference::ModelStreamInferResponse>());
    inference::ModelInferResponse* infer = (*response)->mutable_infer_response();
    SubmitGrpcInference(
        *ctx_, request_, infer,
        [this, response, permit = grant.permit](const absl::Status& status) {
          if (permit) permit->Finish(status.code());
          if (!status.ok()) {
            (*response)->clear_infer_response();
            (*response)->set_error_message(WithoutServerPaths(std::string(status.message())));
          }
          Respond(std::move(*response), /*last=*/true);
        },
        grant);
  }
  // The request was decoded (copied) by now: the buffer can be reused.
  request_.Clear();
  MutexLock lock(&mu_);
  reading_ = false;
  MaybeRead();
}

void StreamInferReactor::Refuse(const absl::Status& status) {
  auto response = std::make_unique<inference::ModelStreamInferResponse>();
  response->set_error_message(std::string(status.message()));
  Respond(std::move(response), /*last=*/true);
}

void StreamInferReactor::MaybeRead() {
  if (reading_ || reads_done_ || broken_ || finished_ || !writes_.MayRead()) return;
  reading_ = true;
  StartRead(&request_);
}

void StreamInferReactor::Generate(std::string model, AccessGrant grant) {
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
  GenerateRequest& request = *decoded->request;
  // A tenant's requests reuse only its own cached prefixes (GenerateRequest::cache_partition).
  if (grant.key != nullptr && grant.key->tenant != nullptr) {
    request.cache_partition = grant.key->tenant->name();
  }
  generation->cancelled = request.cancelled;
  {
    MutexLock lock(&mu_);
    if (cancelled_ || broken_) generation->cancelled->store(true, std::memory_order_release);
    generating_.insert(generation->cancelled);
  }
  // The callback holds no model handle: the decode thread must not release the last one
  // (ServedModel counts the request in flight instead).
  request.on_event = [this, generation](GenerationEvent event) {
    OnGenerationEvent(*generation, std::move(event));
  };
  // The inference path checks the limits, sets the deadline (the request's "timeout", else the
  // model's default) and acquires the model; a refusal arrives as an event.
  ctx_->inference->Generate(
      generation->model, *version, decoded->timeout_us, std::move(decoded->request),
      [generation](const ModelHandle& model) { generation->version = model->version(); });
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
    return Respond(std::move(response), /*last=*/false);
  }
  if (!event.status.ok()) return EndGeneration(generation, event.status);
  std::string text =
      generation.stream ? std::move(event.text) : generation.prefix + generation.text + event.text;
  auto response = std::make_unique<inference::ModelStreamInferResponse>();
  EncodeGrpcGeneration(generation.model, generation.version, generation.id, text, &event,
                       response->mutable_infer_response());
  EndGeneration(generation, absl::OkStatus());
  Respond(std::move(response), /*last=*/true);
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
  Respond(std::move(response), /*last=*/true);
}

void StreamInferReactor::CancelGenerations() {
  for (const auto& cancelled : generating_) cancelled->store(true, std::memory_order_release);
}

void StreamInferReactor::OnCancel() {
  MutexLock lock(&mu_);
  cancelled_ = true;
  CancelGenerations();
}

void StreamInferReactor::Respond(std::unique_ptr<inference::ModelStreamInferResponse> response,
                                 bool last) {
  const size_t bytes = response->ByteSizeLong();  // outside the lock
  MutexLock lock(&mu_);
  if (last) --callbacks_;
  if (broken_) {
    if (last) writes_.Answered();
    MaybeFinish();
    return;
  }
  if (!writes_.Push(std::move(response), bytes, last)) return Cut();
  if (!writing_) {
    writing_ = true;
    StartWrite(writes_.front());
  }
}

void StreamInferReactor::Cut() {
  broken_ = true;
  cut_ = true;
  CancelGenerations();
  // gRPC still reads the one being written; it goes when the client reads it or leaves.
  writes_.DropQueued(/*keep_front=*/writing_);
  MaybeFinish();
}

void StreamInferReactor::OnWriteDone(bool ok) {
  MutexLock lock(&mu_);
  writes_.PopFront();
  if (!ok && !broken_) {  // the client is gone
    broken_ = true;
    CancelGenerations();
    writes_.DropQueued(/*keep_front=*/false);
  }
  if (!writes_.empty()) {  // never after a Cut or a failed write: they empty the queue
    StartWrite(writes_.front());
  } else {
    writing_ = false;
  }
  MaybeRead();  // a request's last response written: the next one may be read
  MaybeFinish();
}

void StreamInferReactor::MaybeFinish() {
  // A model callback still to come would call into a deleted reactor.
  if (finished_ || callbacks_ > 0) return;
  if (cut_) {
    finished_ = true;
    // Sent after the response being written, if the client ever reads that far.
    const StreamWriteLimits& limits = writes_.limits();
    Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        StrCat("the client did not read its responses: ", limits.max_pieces,
                               " responses or ", limits.max_bytes,
                               " bytes waiting to be written are the most one stream may hold; "
                               "the stream was cut and its generations cancelled")));
    return;
  }
  if (broken_) {  // a write failed: nobody is there to read a status
    finished_ = true;
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the stream's client went away"));
    return;
  }
  if (!reads_done_ || writing_) return;
  finished_ = true;
  Finish(grpc::Status::OK);
}

void StreamInferReactor::OnDone() { delete this; }

}  // namespace inferd
