// Serves inference.GRPCInferenceService and grpc.health.v1.Health on one port.
//
// Health: gRPC's built-in health service answers SERVING for "" and for the inference service
// while inferd serves, NOT_SERVING once shutdown begins (as /v2/health/ready turns 503).
// Thread-safety: Start, then BeginShutdown and Shutdown, from one thread.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_SERVER_H_
#define INFERD_FRONTENDS_GRPC_GRPC_SERVER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/server.h>

#include "absl/status/status.h"
#include "frontends/grpc/grpc_context.h"
#include "frontends/grpc/grpc_service.h"

namespace inferd {

struct GrpcServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 8081;  // 0: any free port (see port())
  size_t max_message_bytes = 64u << 20;
  std::chrono::seconds drain_timeout{30};
  // PEM text of the certificate chain and its private key: when set, the port speaks TLS
  // (grpc::SslServerCredentials) instead of plaintext.
  std::string tls_cert_pem;
  std::string tls_key_pem;
};

class GrpcServer {
 public:
  GrpcServer(GrpcServerOptions options, GrpcContext ctx);
  ~GrpcServer();

  // Binds and starts serving. Unavailable when the port cannot be bound.
  absl::Status Start();
  uint16_t port() const { return port_; }

  // Reports NOT_SERVING on the health service (load balancers stop sending traffic).
  void BeginShutdown();
  // Refuses new calls, waits up to drain_timeout for those in flight, then cancels the rest.
  // Returns whether everything finished in time.
  bool Shutdown();

 private:
  const GrpcServerOptions options_;
  InferenceService service_;
  std::unique_ptr<grpc::Server> server_;
  uint16_t port_ = 0;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_SERVER_H_
