// ModelInfer on gRPC's completion-queue API, with polling threads of our own.
//
// Why not the callback API the other RPCs use: there, a call arrives on gRPC's poller, is
// handed to its executor's thread to run our handler, and its reply goes back through the
// executor again, a thread wake-up each way on top of the hand-off to the model's execution
// thread (on a 2-core machine an empty RPC took ~135 µs against ~30 µs over HTTP). A thread
// blocked in ServerCompletionQueue::Next polls the socket itself and runs the handler where
// the request was read; the reply is written by the execution thread that finishes the call.
//
// Each polling thread owns one completion queue and keeps kCallsPerQueue calls posted, so a
// burst of new calls never waits for one to be re-posted.
//
// Thread-safety: AddTo, then Start, then Shutdown, from one thread. Ownership: the service
// and its context outlive this.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_INFER_QUEUES_H_
#define INFERD_FRONTENDS_GRPC_GRPC_INFER_QUEUES_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "common/mutex.h"
#include "frontends/grpc/grpc_service.h"

namespace inferd {

class GrpcInferQueues {
 public:
  static constexpr int kCallsPerQueue = 16;

  GrpcInferQueues(InferenceService* service, int threads);
  ~GrpcInferQueues();

  // Creates the completion queues on `builder` (before BuildAndStart).
  void AddTo(grpc::ServerBuilder& builder);
  // Posts the first calls and starts the polling threads (after BuildAndStart).
  void Start();
  // After grpc::Server::Shutdown: waits until `deadline` for calls still waiting on a model
  // (their replies need the queues), then shuts the queues down and joins the threads. A call
  // still unanswered at the deadline keeps its queue alive: the queues are then left to the
  // process's exit rather than destroyed under it.
  void Shutdown(std::chrono::system_clock::time_point deadline);

  // Called by the calls themselves.
  void CallStarted();
  void CallEnded();
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  InferenceService* service() const { return service_; }

 private:
  void Poll(grpc::ServerCompletionQueue* queue);

  InferenceService* const service_;
  const int threads_;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::vector<std::thread> pollers_;
  std::atomic<bool> stopping_{false};
  Mutex mu_;
  CondVar idle_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_INFER_QUEUES_H_
