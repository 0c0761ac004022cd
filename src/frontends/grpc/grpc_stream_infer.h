// ModelStreamInfer: a bidirectional stream of inference requests, each answered by one
// ModelStreamInferResponse (an error travels in error_message and the stream goes on).
//
// A request for a language model (backend llama) generates instead, as Triton's decoupled
// models do (grpc_generate_codec.h): with input `stream` true it is answered by one response
// per piece of text, the last one carrying triton_final_response true. A stream the client
// cancels, or whose write fails, cancels its generations: their sequences are freed at the
// model's next step.
//
// Requests on one stream run concurrently; their responses are written in the order they
// complete, one write in flight at a time as gRPC requires. The reactor deletes itself in
// OnDone, which gRPC calls only after Finish, which is called only once the client has
// closed its side and every request has been answered.
// Thread-safety: gRPC callbacks and model completions may come from any thread; the write
// queue and counters are guarded by mu_.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_STREAM_INFER_H_
#define INFERD_FRONTENDS_GRPC_GRPC_STREAM_INFER_H_

#include <atomic>
#include <deque>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "auth/access_policy.h"
#include "common/mutex.h"
#include "core/generation.h"
#include "frontends/grpc/grpc_context.h"
#include "inference_service.grpc.pb.h"

namespace inferd {

class StreamInferReactor final
    : public grpc::ServerBidiReactor<inference::ModelInferRequest,
                                     inference::ModelStreamInferResponse> {
 public:
  // `authorization`: the call's metadata value, checked again (model list, tenant limits)
  // for every message.
  StreamInferReactor(const GrpcContext* ctx, std::string authorization);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  struct Generation;

  // Starts the generation request_ asks of `model` (a llama model); its responses go out
  // through Respond. Counted in pending_ (by the caller) until its last response.
  void Generate(std::string model, AccessGrant grant);
  void OnGenerationEvent(Generation& generation, GenerationEvent event);
  void EndGeneration(Generation& generation, const absl::Status& status);
  // Sets every running generation's cancel flag; called with mu_ held.
  void CancelGenerations() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues one answer for writing (or drops it when the stream is broken).
  void Respond(std::unique_ptr<inference::ModelStreamInferResponse> response);
  // Finishes the RPC once reading is over and nothing is pending; called with mu_ held.
  void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const GrpcContext* const ctx_;
  const std::string authorization_;
  inference::ModelInferRequest request_;  // only the reading side touches it

  Mutex mu_;
  int pending_ ABSL_GUARDED_BY(mu_) = 0;  // requests submitted and not yet written
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;  // a write failed: the client is gone
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // the client cancelled the call
  // The cancel flags of the generations still running.
  std::set<std::shared_ptr<std::atomic<bool>>> generating_ ABSL_GUARDED_BY(mu_);
  std::deque<std::unique_ptr<inference::ModelStreamInferResponse>> writes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_STREAM_INFER_H_
