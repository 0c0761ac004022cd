#include "frontends/grpc/grpc_server.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <grpc/grpc.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "common/strings.h"

namespace inferd {
namespace {

constexpr char kServiceName[] = "inference.GRPCInferenceService";

}  // namespace

GrpcServer::GrpcServer(GrpcServerOptions options, GrpcContext ctx)
    : options_(std::move(options)), service_(std::move(ctx)) {}

GrpcServer::~GrpcServer() {
  if (server_) Shutdown();
}

absl::Status GrpcServer::Start() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int bound_port = 0;
  // IPv6 literals need brackets in a gRPC address.
  const std::string host = options_.host.find(':') != std::string::npos
                               ? StrCat("[", options_.host, "]")
                               : options_.host;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options_.tls_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({options_.tls_key_pem, options_.tls_cert_pem});
    credentials = grpc::SslServerCredentials(tls);
  }
  builder.AddListeningPort(StrCat(host, ":", options_.port), credentials, &bound_port);
  // gRPC takes an int: --max-request-bytes goes up to 16 GiB, and a cast of 4 GiB gave 0.
  const int max_message = static_cast<int>(
      std::min<size_t>(options_.max_message_bytes, std::numeric_limits<int>::max()));
  builder.SetMaxReceiveMessageSize(max_message);
  builder.SetMaxSendMessageSize(max_message);
  // Request metadata (headers) beyond 16 KiB is refused before any handler runs; gRPC's own
  // default depends on the version.
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, 16 * 1024);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (!server_ || bound_port == 0) {
    server_.reset();
    return absl::UnavailableError(StrCat("cannot serve gRPC on ", options_.host, ":", options_.port,
                                         " (is the port in use? set --grpc-port)"));
  }
  port_ = static_cast<uint16_t>(bound_port);
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  health->SetServingStatus(true);
  health->SetServingStatus(kServiceName, true);
  return absl::OkStatus();
}

void GrpcServer::BeginShutdown() {
  if (!server_) return;
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  health->SetServingStatus(false);
}

bool GrpcServer::Shutdown() {
  if (!server_) return true;
  const auto start = std::chrono::system_clock::now();
  const auto deadline = start + options_.drain_timeout;
  server_->Shutdown(deadline);
  server_->Wait();
  server_.reset();
  return std::chrono::system_clock::now() < deadline;
}

}  // namespace inferd
