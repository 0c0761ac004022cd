// inferd: wiring only. Parses flags, loads the repository, serves HTTP and gRPC until
// SIGTERM/SIGINT, then drains and exits 0.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/thread_pool.hpp>

#include "backends/llama/llama_backend.h"
#include "backends/onnx/onnx_backend.h"
#include "backends/pipeline/pipeline_backend.h"
#include "backends/pipeline/pipeline_host.h"
#include "backends/torch/torch_backend.h"
#include "common/client_paths.h"
#include "common/cores.h"
#include "core/pipeline/op_registry.h"
#include "core/repository/model_manager.h"
#include "core/service/inference_path.h"
#include "frontends/grpc/grpc_server.h"
#include "frontends/http/handlers/static_files.h"
#include "frontends/http/routing/router.h"
#include "frontends/http/transport/http_server.h"
#include "observability/log_setup.h"
#include "observability/metrics_registry.h"
#include "observability/nvml_reader.h"
#include "observability/recent_errors.h"
#include "observability/request_recorder.h"
#include "ops/image/register_image_ops.h"
#include "ops/post/register_post_ops.h"
#include "ops/text/register_text_ops.h"
#include "server/access_setup.h"
#include "server/lifecycle_options.h"
#include "server/server_options.h"
#include "server/stop_signals.h"
#include "server/tls_files.h"
#include "server/version.h"
#include "shm/shared_memory_registry.h"

namespace inferd {
namespace {

// Written to a temporary name and renamed, so that a reader never sees half a file.
absl::Status WritePortFile(const std::string& path, int http_port, int grpc_port) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << "{\"http\": " << http_port << ", \"grpc\": " << grpc_port << "}\n";
    if (!out.flush()) return absl::InternalError("--port-file: cannot write " + temporary);
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return absl::InternalError("--port-file: cannot write " + path + ": " + ec.message());
  return absl::OkStatus();
}

void LogModelSummary(const ModelManager& models) {
  const std::vector<ModelStatus> index = models.Index();
  spdlog::info("{} model(s) in the repository:", index.size());
  for (const ModelStatus& status : index) {
    spdlog::info("  {:<24} version {:<4} {}{}{}", status.name,
                 status.version ? std::to_string(*status.version) : "-",
                 ModelStateName(status.state), status.reason.empty() ? "" : ": ", status.reason);
  }
}

// The built dashboard, or null (with a warning) when there is none: the server runs anyway.
std::unique_ptr<StaticFiles> LoadDashboard(const ServerOptions& options) {
  std::filesystem::path dir = options.dashboard_dir;
  if (dir.empty()) {
    std::error_code ec;
    dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "dashboard";
  }
  absl::StatusOr<StaticFiles> files = StaticFiles::Load(dir);
  if (!files.ok()) {
    spdlog::warn("no dashboard at /dashboard: {} (scripts/setup builds it)",
                 std::string(files.status().message()));
    return nullptr;
  }
  return std::make_unique<StaticFiles>(*std::move(files));
}

int Run(const ServerOptions& options) {
  if (absl::Status logging = ConfigureLogging(*ParseLogFormat(options.log_format),
                                              options.log_level, options.access_log);
      !logging.ok()) {
    spdlog::critical("{}", std::string(logging.message()));
    return 1;
  }

  // Signals are taken synchronously by this thread (StopSignals); every thread started from
  // here on, LibTorch's pools included, inherits the blocked mask.
  StopSignals stop_signals;

  spdlog::info("inferd {} starting; model repository {}", kInferdVersion, options.model_repository);
  auto torch = std::make_unique<TorchBackend>(
      TorchBackendOptions{.intra_op_threads = options.intra_op_threads});
  const TorchBackend* torch_backend = torch.get();
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::move(torch));
  auto onnx = std::make_unique<OnnxBackend>(
      OnnxBackendOptions{.intra_op_threads = options.intra_op_threads});
  spdlog::info("backend onnx: {}", onnx->Describe());
  backends.push_back(std::move(onnx));
  auto llama = std::make_unique<LlamaBackend>();
  spdlog::info("backend llama: {}", llama->Describe());
  backends.push_back(std::move(llama));
  // Pipelines: the built-in ops their steps may name, and the late binding to the repository
  // and the inference path (both built after the backends).
  OpRegistry pipeline_ops;
  RegisterPostOps(pipeline_ops);
  RegisterImageOps(pipeline_ops);
  RegisterTextOps(pipeline_ops);
  PipelineHost pipeline_host;
  backends.push_back(std::make_unique<PipelineBackend>(&pipeline_ops, &pipeline_host));

  MetricsRegistry metrics(kInferdVersion);
  InstallNvmlGpuMetrics();  // inferd_gpu_* in /metrics where an NVIDIA driver is present
  RecentErrors recent_errors;
  RequestRecorder recorder(&metrics, &recent_errors);
  absl::StatusOr<AccessSetup> access = SetUpAccess(options, &metrics);
  if (!access.ok()) {
    spdlog::critical("{}", std::string(access.status().message()));
    return 2;
  }
  TlsPem tls;
  if (!options.tls_cert_file.empty()) {
    absl::StatusOr<TlsPem> read = ReadTlsFiles(options.tls_cert_file, options.tls_key_file);
    if (!read.ok()) {
      spdlog::critical("{}", std::string(read.status().message()));
      return 2;
    }
    tls = *std::move(read);
  }
  const std::unique_ptr<StaticFiles> dashboard = LoadDashboard(options);
  absl::StatusOr<ModelManagerOptions> lifecycle = LifecycleOptionsFrom(options);
  if (!lifecycle.ok()) {
    spdlog::critical("{}", std::string(lifecycle.status().message()));
    return 2;
  }
  lifecycle->observers = &metrics;
  HideFolderFromClients(options.model_repository);
  // Finishes gRPC inference calls off the models' execution threads (grpc_context.h). Made
  // before the models, so it outlives any version that still answers a gRPC request.
  // As many threads as HTTP's default I/O threads: the work is the same copy HTTP's I/O
  // threads make when they encode a reply.
  boost::asio::thread_pool grpc_completions(static_cast<size_t>(std::max(1, CoresAvailable() / 4)));
  ModelManager models(options.model_repository, std::move(backends), *std::move(lifecycle));
  // Before LoadAll: a pipeline's load checks its step models' configs, and its model steps
  // take the same door as every request.
  InferencePath inference(&models, options.default_model);
  pipeline_host.Bind(&models, &inference);
  // Unbound before `inference` goes: a pipeline step submitted during shutdown is refused.
  struct Unbind {
    PipelineHost* host;
    ~Unbind() { host->Unbind(); }
  } unbind{&pipeline_host};
  if (absl::Status loaded = models.LoadAll(); !loaded.ok()) {
    spdlog::critical("{}", std::string(loaded.message()));
    return 1;
  }
  LogModelSummary(models);

  std::atomic<bool> draining{false};
  // One tensor read out of shared memory is bounded as one request body is.
  SharedMemoryRegistry shared_memory(
      SharedMemoryLimits{.max_tensor_bytes = options.max_request_bytes});
  // What both frontends share, once; each adds what only it has.
  const FrontendContext frontend{.inference = &inference,
                                 .models = &models,
                                 .server_version = std::string(kInferdVersion),
                                 .draining = &draining,
                                 .access = access->policy.get(),
                                 .shared_memory = &shared_memory};
  HandlerContext http_context{frontend};
  http_context.metrics = &metrics;
  http_context.recent_errors = &recent_errors;
  http_context.dashboard = dashboard.get();
  HttpRouter router(std::move(http_context));
  GrpcContext grpc_context{frontend};
  grpc_context.recorder = &recorder;
  grpc_context.completions = &grpc_completions;
  // gRPC first: once HTTP answers ready, both protocols are served.
  GrpcServer grpc_server(
      GrpcServerOptions{.host = options.host,
                        .port = options.grpc_port,
                        .max_message_bytes = options.max_request_bytes,
                        .drain_timeout = std::chrono::seconds(options.shutdown_timeout_s),
                        .tls_cert_pem = tls.cert_chain,
                        .tls_key_pem = tls.private_key},
      std::move(grpc_context));
  if (absl::Status started = grpc_server.Start(); !started.ok()) {
    spdlog::critical("{}", std::string(started.message()));
    return 1;
  }
  const bool tls_on = !tls.cert_chain.empty();
  spdlog::info("listening on grpc{}://{}:{}", tls_on ? "s" : "", options.host, grpc_server.port());
  HttpServerOptions http;
  http.host = options.host;
  http.port = options.http_port;
  http.io_threads =
      options.http_threads > 0 ? options.http_threads : std::max(1, CoresAvailable() / 4);
  http.max_request_bytes = options.max_request_bytes;
  http.max_stream_backlog_bytes = options.max_stream_backlog_bytes;
  http.header_timeout = std::chrono::seconds(options.header_timeout_s);
  http.body_timeout = std::chrono::seconds(options.body_timeout_s);
  http.drain_timeout = std::chrono::seconds(options.shutdown_timeout_s);
  http.recorder = &recorder;
  http.busy_poll = std::chrono::microseconds(options.busy_poll_us);
  http.tls_cert_pem = tls.cert_chain;
  http.tls_key_pem = tls.private_key;
  HttpServer server(http, &router, &draining);
  if (absl::Status started = server.Start(); !started.ok()) {
    spdlog::critical("{}", std::string(started.message()));
    return 1;
  }
  spdlog::info("listening on http{}://{}:{} ({} I/O thread(s), {} intra-op thread(s))",
               tls_on ? "s" : "", options.host, server.port(), http.io_threads,
               torch_backend->intra_op_threads());
  if (!options.port_file.empty()) {
    if (absl::Status written = WritePortFile(options.port_file, server.port(), grpc_server.port());
        !written.ok()) {
      spdlog::critical("{}", std::string(written.message()));
      return 1;
    }
  }

  const int signal_number = stop_signals.WaitForStop();
  // Not ready from now on (both protocols' health checks), and every reply says
  // `Connection: close`, so balancers and clients move to other replicas.
  draining.store(true);
  if (signal_number == SIGTERM && options.drain_seconds > 0) {
    spdlog::info(
        "received SIGTERM: not ready; still serving for the {} s drain period "
        "(a second signal ends it)",
        options.drain_seconds);
    const auto waited = stop_signals.WaitOutDrain(std::chrono::seconds(options.drain_seconds));
    spdlog::info("drain period over after {} ms", waited.count());
  }
  spdlog::info("received {}: no new connections; finishing requests in flight",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  // Both frontends drain at once: each waits for its own requests in flight.
  grpc_server.BeginShutdown();
  bool grpc_drained = true;
  std::thread grpc_drain([&] { grpc_drained = grpc_server.Shutdown(); });
  const bool drained = server.Shutdown();
  grpc_drain.join();
  models.StopAll();
  grpc_completions.join();
  spdlog::info("stopped{}", drained && grpc_drained ? "" : " (drain timed out)");
  ShutdownLogging();
  return 0;
}

}  // namespace
}  // namespace inferd

int main(int argc, char** argv) {
  int exit_code = 0;
  std::optional<inferd::ServerOptions> options = inferd::ParseServerOptions(argc, argv, &exit_code);
  if (!options) return exit_code;
  return inferd::Run(*options);
}
