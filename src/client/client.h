// inferd::Client: a C++ client for inferd and any Open Inference Protocol (KServe v2)
// server, over HTTP (binary tensor extension) or gRPC, synchronous or asynchronous, with
// inferd::Tensor in and out.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::CreateGrpc("localhost:8081"));
//   ASSIGN_OR_RETURN(InferResult result, client->Infer({.model = "mlp_scorer"}, inputs));
//
// Thread-safety: every method may be called from several threads at once (the HTTP client
// keeps a pool of keep-alive connections; the gRPC client shares one channel). Async
// callbacks run on a client thread and must not block.
#ifndef INFERD_CLIENT_CLIENT_H_
#define INFERD_CLIENT_CLIENT_H_

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types/tensor.h"

namespace inferd {

struct InferOptions {
  std::string model;
  std::string version;               // empty: the server's choice
  std::string id;                    // echoed back
  std::vector<std::string> outputs;  // empty: all of them
  int priority = 0;                  // 0: the model's default
  int64_t timeout_us = 0;            // 0: the model's default
};

struct InferResult {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<NamedTensor> outputs;
  // The output called `name`, or nullptr.
  const Tensor* Output(std::string_view name) const;
};

struct TensorMetadata {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;  // -1: variable
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;
  std::string platform;
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
};

using InferCallback = std::function<void(absl::StatusOr<InferResult>)>;

class Client {
 public:
  virtual ~Client() = default;

  // "host:port" of the HTTP API; tensors travel as binary data after a JSON header.
  static absl::StatusOr<std::unique_ptr<Client>> CreateHttp(const std::string& address);
  // "host:port" of the gRPC API.
  static absl::StatusOr<std::unique_ptr<Client>> CreateGrpc(const std::string& address);

  virtual absl::StatusOr<bool> IsServerLive() = 0;
  virtual absl::StatusOr<bool> IsServerReady() = 0;
  virtual absl::StatusOr<bool> IsModelReady(const std::string& model,
                                            const std::string& version = "") = 0;
  virtual absl::StatusOr<ModelMetadata> GetModelMetadata(const std::string& model,
                                                         const std::string& version = "") = 0;

  // Errors: the server's status (NotFound, InvalidArgument, ...) with its message, or
  // Unavailable when it cannot be reached.
  virtual absl::StatusOr<InferResult> Infer(const InferOptions& options,
                                            const std::vector<NamedTensor>& inputs) = 0;
  // Calls `done` once, from a client thread, with what Infer would return.
  virtual void InferAsync(InferOptions options, std::vector<NamedTensor> inputs,
                          InferCallback done) = 0;
  // InferAsync as a future.
  std::future<absl::StatusOr<InferResult>> InferFuture(InferOptions options,
                                                       std::vector<NamedTensor> inputs);
};

}  // namespace inferd

#endif  // INFERD_CLIENT_CLIENT_H_
