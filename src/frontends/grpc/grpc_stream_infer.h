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
// complete, one write in flight at a time as gRPC requires. What waits to be written is
// bounded (stream_write_queue.h): the next request is read only while fewer than 64 wait for
// their answers, and a client that lets the pieces of its generations pile up past the
// queue's limits is cut: its generations are cancelled and the call ends with
// RESOURCE_EXHAUSTED. A request id over kMaxClientIdBytes is refused (error_message) before
// anything is copied or queued: every piece echoes it.
//
// The reactor deletes itself in OnDone, which gRPC calls only after Finish. Finish is called
// once no model callback can reach the reactor any more (every request read has produced its
// last response), and then: normally once the client has closed its side and everything is
// written; at once when the stream was cut or a write failed.
// Thread-safety: gRPC callbacks and model completions may come from any thread; the write
// queue and counters are guarded by mu_.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_STREAM_INFER_H_
#define INFERD_FRONTENDS_GRPC_GRPC_STREAM_INFER_H_

#include <atomic>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "auth/access_policy.h"
#include "common/mutex.h"
#include "core/backend/generation.h"
#include "frontends/grpc/grpc_context.h"
#include "frontends/grpc/stream_write_queue.h"
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
  // through Respond, the last one with `last`.
  void Generate(std::string model, AccessGrant grant);
  void OnGenerationEvent(Generation& generation, GenerationEvent event);
  void EndGeneration(Generation& generation, const absl::Status& status);
  // Sets every running generation's cancel flag; called with mu_ held.
  void CancelGenerations() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers the request being read with `status` (an error), as its only response.
  void Refuse(const absl::Status& status);
  // Queues one response for writing (or drops it when the stream is broken). `last`: its
  // request's last response.
  void Respond(std::unique_ptr<inference::ModelStreamInferResponse> response, bool last);
  // Reads the next request if the stream may; called with mu_ held.
  void MaybeRead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Cuts a stream whose client does not read: see the class comment.
  void Cut() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Finishes the RPC when it is time (see the class comment); called with mu_ held.
  void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const GrpcContext* const ctx_;
  const std::string authorization_;
  inference::ModelInferRequest request_;  // only the reading side touches it

  Mutex mu_;
  // Requests read whose last response has not reached Respond: model callbacks that will
  // still call into the reactor.
  int callbacks_ ABSL_GUARDED_BY(mu_) = 0;
  // A read is outstanding, or OnReadDone is still using request_.
  bool reading_ ABSL_GUARDED_BY(mu_) = true;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;  // the client closed its side
  bool writing_ ABSL_GUARDED_BY(mu_) = false;     // writes_.front() is being written
  bool broken_ ABSL_GUARDED_BY(mu_) = false;      // nothing more is written or served
  bool cut_ ABSL_GUARDED_BY(mu_) = false;         // broken by Cut, not by a failed write
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // the client cancelled the call
  // The cancel flags of the generations still running.
  std::set<std::shared_ptr<std::atomic<bool>>> generating_ ABSL_GUARDED_BY(mu_);
  StreamWriteQueue<inference::ModelStreamInferResponse> writes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_STREAM_INFER_H_
