#include "frontends/grpc/grpc_stream_infer.h"

#include <string>
#include <utility>

#include "common/client_paths.h"
#include "frontends/grpc/grpc_access.h"
#include "frontends/grpc/grpc_inference.h"

namespace inferd {

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
  if (absl::Status allowed =
          CheckGrpcStreamMessage(*ctx_, authorization_, request_.model_name(), &grant);
      !allowed.ok()) {
    (*response)->set_error_message(std::string(allowed.message()));
    Respond(std::move(*response));
    request_.Clear();
    StartRead(&request_);
    return;
  }
  inference::ModelInferResponse* infer = (*response)->mutable_infer_response();
  SubmitGrpcInference(
      *ctx_, request_, infer,
      [this, response, permit = std::move(grant.permit)](const absl::Status& status) {
        if (permit) permit->Finish(status.code());
        if (!status.ok()) {
          (*response)->clear_infer_response();
          (*response)->set_error_message(WithoutServerPaths(std::string(status.message())));
        }
        Respond(std::move(*response));
      },
      grant.priority);
  // The request was decoded (copied) during SubmitGrpcInference: the buffer can be reused.
  request_.Clear();
  StartRead(&request_);
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
