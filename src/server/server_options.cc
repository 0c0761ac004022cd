#include "server/server_options.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "server/version.h"

namespace inferd {
namespace {

// CLI11 names the flag in its errors even when the bad value came from the flag's
// environment variable; someone who set MAX_WORKERS=0 would look for a flag they never
// passed. Returns a line naming the variable and its value, or "" when the error is not
// about a value taken from the environment.
std::string EnvironmentSource(const CLI::App& app, int argc, char** argv, std::string_view error) {
  for (const CLI::Option* option : app.get_options()) {
    const std::string& variable = option->get_envname();
    const char* value = variable.empty() ? nullptr : std::getenv(variable.c_str());
    const std::string flag = option->get_name();  // "--default-instances"
    if (value == nullptr || flag.empty() || error.find(flag) == std::string_view::npos) continue;
    bool on_command_line = false;
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg(argv[i]);
      on_command_line |= arg == flag || arg.starts_with(flag + "=");
    }
    if (on_command_line) continue;
    return "The value came from the environment variable " + variable + "=\"" + value + "\" (" +
           flag + " overrides it).";
  }
  return "";
}

}  // namespace

std::optional<ServerOptions> ParseServerOptions(int argc, char** argv, int* exit_code) {
  ServerOptions options;
  CLI::App app{
      "inferd: serves TorchScript models over HTTP (KServe v2, /predict, TF-Serving "
      "REST).\nEvery flag can also be set by the environment variable shown."};
  app.set_version_flag("--version", std::string(kInferdVersion));
  app.add_option("--model-repository", options.model_repository,
                 "Folder of models: <repo>/<model>/config.yaml and <repo>/<model>/<N>/model.pt")
      ->envname("INFERD_MODEL_REPOSITORY")
      ->required();
  app.add_option("--host", options.host, "Address to listen on")
      ->envname("INFERD_HOST")
      ->capture_default_str();
  app.add_option("--http-port", options.http_port, "HTTP port (0 picks a free one)")
      ->envname("INFERD_HTTP_PORT")
      ->capture_default_str();
  app.add_option("--grpc-port", options.grpc_port, "gRPC port (0 picks a free one)")
      ->envname("INFERD_GRPC_PORT")
      ->capture_default_str();
  app.add_option("--port-file", options.port_file,
                 "Once listening, write {\"http\": PORT, \"grpc\": PORT} to this file (for "
                 "scripts that pass port 0)")
      ->envname("INFERD_PORT_FILE");
  app.add_option("--http-threads", options.http_threads,
                 "I/O threads (0: a quarter of the cores, at least 1)")
      ->envname("INFERD_HTTP_THREADS")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--max-request-bytes", options.max_request_bytes,
                 "Largest request body accepted; larger ones get 413")
      ->envname("INFERD_MAX_REQUEST_BYTES")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 34))
      ->capture_default_str();
  app.add_option("--max-stream-backlog-bytes", options.max_stream_backlog_bytes,
                 "Most bytes of a streamed reply (server-sent events) that may wait for a client "
                 "that does not read; beyond it the stream is cut and the generation stopped")
      ->envname("INFERD_MAX_STREAM_BACKLOG_BYTES")
      ->check(CLI::Range(size_t{4096}, size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--header-timeout", options.header_timeout_s,
                 "Seconds a client has to send a request's header, from its first byte (and "
                 "a new connection's first header from the connect); then it is closed")
      ->envname("INFERD_HEADER_TIMEOUT")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--body-timeout", options.body_timeout_s,
                 "Seconds a client has to send a request's body after its header")
      ->envname("INFERD_BODY_TIMEOUT")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--default-model", options.default_model,
                 "Model that POST /predict uses without ?model= (default: the only model)")
      ->envname("INFERD_DEFAULT_MODEL");
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error")
      ->envname("INFERD_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_option("--intra-op-threads", options.intra_op_threads,
                 "Threads one LibTorch forward pass may use (0: one per available core)")
      ->envname("INFERD_INTRA_OP_THREADS")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--busy-poll-us", options.busy_poll_us,
                 "Microseconds an idle HTTP I/O thread or model instance keeps watching for "
                 "work before it sleeps: lower latency at low load for some idle CPU (0: off; "
                 "a model's queue.busy_poll_us overrides it)")
      ->envname("INFERD_BUSY_POLL_US")
      ->check(CLI::Range(0, 10'000))
      ->capture_default_str();
  app.add_option("--shutdown-timeout", options.shutdown_timeout_s,
                 "Seconds SIGTERM waits for in-flight requests")
      ->envname("INFERD_SHUTDOWN_TIMEOUT")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  app.add_option("--drain-seconds", options.drain_seconds,
                 "After SIGTERM, seconds inferd reports not-ready but keeps accepting and "
                 "serving, so balancers can take it out of rotation before it stops "
                 "listening (SIGINT, or a second signal, skips the rest)")
      ->envname("INFERD_DRAIN_SECONDS")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  app.add_option("--default-max-batch-size", options.default_max_batch_size,
                 "max_batch_size for configs that do not set it (0: no batch dimension)")
      ->envname("BATCH_SIZE")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--default-instances", options.default_instances,
                 "Execution instances for configs without `instances`")
      ->envname("MAX_WORKERS")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--log-format", options.log_format,
                 "plain (for a terminal) or json (one object per line, for log shippers)")
      ->envname("INFERD_LOG_FORMAT")
      ->check(CLI::IsMember({"plain", "json"}))
      ->capture_default_str();
  app.add_option("--access-log", options.access_log, "One log line per request (true/false)")
      ->envname("INFERD_ACCESS_LOG")
      ->capture_default_str();
  app.add_option("--dashboard-dir", options.dashboard_dir,
                 "The built dashboard served at /dashboard (default: 'dashboard' beside the "
                 "binary, where scripts/setup builds it)")
      ->envname("INFERD_DASHBOARD_DIR");
  app.add_option("--model-control", options.model_control,
                 "none: load every model at start; explicit: only --load-model and the load "
                 "API; watch: as none, then follow repository changes")
      ->envname("INFERD_MODEL_CONTROL")
      ->check(CLI::IsMember({"none", "explicit", "watch"}))
      ->capture_default_str();
  app.add_option("--load-model", options.load_models,
                 "With --model-control explicit: a model to load at start (repeatable)")
      ->envname("INFERD_LOAD_MODEL");
  app.add_flag("--lazy-load", options.lazy_load,
               "Load every model on its first request instead of at start")
      ->envname("INFERD_LAZY_LOAD");
  app.add_option("--memory-budget", options.memory_budget,
                 "Memory for model weights per device, e.g. cpu=24GiB,cuda:0=60GiB "
                 "(default: 80% of the machine's memory); loads beyond it evict idle models")
      ->envname("INFERD_MEMORY_BUDGET");
  app.add_option("--watch-interval-ms", options.watch_interval_ms,
                 "With --model-control watch: how often the repository is rescanned")
      ->envname("INFERD_WATCH_INTERVAL_MS")
      ->check(CLI::Range(10, 3'600'000))
      ->capture_default_str();
  app.add_option("--settle-ms", options.settle_ms,
                 "With --model-control watch: how long a copied version folder must stay "
                 "unchanged before it loads (a folder renamed into place loads at once)")
      ->envname("INFERD_SETTLE_MS")
      ->check(CLI::Range(0, 3'600'000))
      ->capture_default_str();
  app.add_option("--api-keys-file", options.api_keys_file,
                 "YAML file of API keys with their roles and tenants (docs/security.md); "
                 "INFERD_API_KEY adds one key with every role")
      ->envname("INFERD_API_KEYS_FILE");
  app.add_flag("--allow-unauthenticated-management", options.allow_unauthenticated_management,
               "Without API keys, answer load/unload/traffic/logging changes from anyone (by "
               "default they are refused on a non-loopback address, and answer only local, "
               "unrelayed clients on loopback)")
      ->envname("INFERD_ALLOW_UNAUTHENTICATED_MANAGEMENT");
  app.add_option("--trusted-proxies", options.trusted_proxies,
                 "Without API keys on loopback, management answers only local clients, and a "
                 "request carrying Forwarded, X-Forwarded-For or X-Real-IP (relayed by a "
                 "proxy) is not local. List your proxies' IP addresses here (comma-separated, "
                 "e.g. 127.0.0.1) to judge their requests by the client X-Forwarded-For names")
      ->envname("INFERD_TRUSTED_PROXIES");
  app.add_option("--tls-cert-file", options.tls_cert_file,
                 "PEM certificate (chain) for TLS on the HTTP and gRPC listeners")
      ->envname("INFERD_TLS_CERT_FILE");
  app.add_option("--tls-key-file", options.tls_key_file, "PEM private key for --tls-cert-file")
      ->envname("INFERD_TLS_KEY_FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = app.exit(e);
    if (const std::string source = EnvironmentSource(app, argc, argv, e.what()); !source.empty()) {
      std::cerr << source << "\n";
    }
    return std::nullopt;
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    std::cerr << "--tls-cert-file and --tls-key-file go together: give both or neither\n";
    *exit_code = 2;
    return std::nullopt;
  }
  return options;
}

}  // namespace inferd
