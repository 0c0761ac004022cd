// What the gRPC service shares with its handlers: what every frontend has
// (frontend_context.h), the recorder HTTP's sessions hold themselves, and the pool that
// finishes its calls.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_
#define INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_

#include "frontends/frontend_context.h"
#include "observability/request_recorder.h"

namespace boost::asio {
class thread_pool;
}  // namespace boost::asio

namespace inferd {

struct GrpcContext : FrontendContext {
  // Records every ModelInfer outcome (metrics, access log) as HTTP requests are; optional.
  RequestRecorder* recorder = nullptr;
  // Where a ModelInfer answer is finished while other requests of its model wait:
  // shared-memory outputs written, the outputs copied into the reply, the request recorded,
  // the call finished, so that the model's execution thread goes on to its next batch
  // (docs/inference-path.md, "Which thread does what"). Null: always finished on the thread
  // that answered (tests, fuzzers). Must outlive every model that may still answer a gRPC
  // request (main joins it after the models stop).
  boost::asio::thread_pool* completions = nullptr;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_CONTEXT_H_
