// inferd: wiring only. Parses flags, loads the repository, serves HTTP until SIGTERM/SIGINT,
// then drains and exits 0.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "backends/torch/torch_backend.h"
#include "common/cores.h"
#include "core/repository/model_manager.h"
#include "frontends/http/http_server.h"
#include "frontends/http/router.h"
#include "server/lifecycle_options.h"
#include "server/server_options.h"
#include "server/version.h"

namespace inferd {
namespace {

void LogModelSummary(const ModelManager& models) {
  const std::vector<ModelStatus> index = models.Index();
  spdlog::info("{} model(s) in the repository:", index.size());
  for (const ModelStatus& status : index) {
    spdlog::info("  {:<24} version {:<4} {}{}{}", status.name,
                 status.version ? std::to_string(*status.version) : "-",
                 ModelStateName(status.state), status.reason.empty() ? "" : ": ", status.reason);
  }
}

int Run(const ServerOptions& options) {
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ %v");
  spdlog::set_level(spdlog::level::from_str(options.log_level));

  // Signals are taken synchronously by this thread (sigwait below); every thread started
  // from here on, LibTorch's pools included, inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  spdlog::info("inferd {} starting; model repository {}", kInferdVersion, options.model_repository);
  auto torch = std::make_unique<TorchBackend>(
      TorchBackendOptions{.intra_op_threads = options.intra_op_threads});
  const TorchBackend* torch_backend = torch.get();
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::move(torch));

  absl::StatusOr<ModelManagerOptions> lifecycle = LifecycleOptionsFrom(options);
  if (!lifecycle.ok()) {
    spdlog::critical("{}", std::string(lifecycle.status().message()));
    return 2;
  }
  ModelManager models(options.model_repository, std::move(backends), *std::move(lifecycle));
  if (absl::Status loaded = models.LoadAll(); !loaded.ok()) {
    spdlog::critical("{}", std::string(loaded.message()));
    return 1;
  }
  LogModelSummary(models);

  std::atomic<bool> draining{false};
  HttpRouter router(HandlerContext{.models = &models,
                                   .server_version = std::string(kInferdVersion),
                                   .default_model = options.default_model,
                                   .draining = &draining});
  HttpServerOptions http;
  http.host = options.host;
  http.port = options.http_port;
  http.io_threads =
      options.http_threads > 0 ? options.http_threads : std::max(1, CoresAvailable() / 4);
  http.max_request_bytes = options.max_request_bytes;
  http.drain_timeout = std::chrono::seconds(options.shutdown_timeout_s);
  HttpServer server(http, &router, &draining);
  if (absl::Status started = server.Start(); !started.ok()) {
    spdlog::critical("{}", std::string(started.message()));
    return 1;
  }
  spdlog::info("listening on http://{}:{} ({} I/O thread(s), {} intra-op thread(s))", options.host,
               server.port(), http.io_threads, torch_backend->intra_op_threads());

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("received {}: no new connections; finishing requests in flight",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  const bool drained = server.Shutdown();
  models.StopAll();
  spdlog::info("stopped{}", drained ? "" : " (drain timed out)");
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
