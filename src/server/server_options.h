// Command-line flags and their INFERD_* environment equivalents.
#ifndef INFERD_SERVER_SERVER_OPTIONS_H_
#define INFERD_SERVER_SERVER_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferd {

struct ServerOptions {
  std::string model_repository;
  std::string host = "0.0.0.0";
  uint16_t http_port = 8080;
  uint16_t grpc_port = 8081;  // inference.GRPCInferenceService + grpc.health.v1.Health
  // Once both ports listen, {"http": N, "grpc": M} is written here: how a script that
  // started inferd with port 0 learns the ports the kernel chose. Empty: not written.
  std::string port_file;
  int http_threads = 0;  // 0: chosen from the core count
  size_t max_request_bytes = 64u << 20;
  // A streaming client that lets more than this wait unread is cut (499); the default is
  // HttpServerOptions's (frontends/http/transport/http_server.h says why).
  size_t max_stream_backlog_bytes = 1u << 20;
  // Seconds a request's header may take from its first byte, and its body after the header.
  int header_timeout_s = 10;
  int body_timeout_s = 60;
  std::string default_model;
  std::string log_level = "info";
  int intra_op_threads = 0;  // 0: one per available core
  // How long idle I/O threads and model instances watch for work before sleeping.
  int busy_poll_us = 100;
  int shutdown_timeout_s = 30;
  // After SIGTERM: seconds of serving while not ready, before the listeners close.
  int drain_seconds = 5;
  // Defaults for configs that leave these out (the seed's BATCH_SIZE and MAX_WORKERS).
  int default_max_batch_size = 0;
  int default_instances = 1;
  // Observability.
  std::string log_format = "plain";  // plain (terminal) or json (one object per line)
  bool access_log = true;            // one line per request
  std::string dashboard_dir;         // empty: "dashboard" beside the binary
  // Model lifecycle (README: Model lifecycle and memory).
  std::string model_control = "none";  // none | explicit | watch
  std::vector<std::string> load_models;
  bool lazy_load = false;
  std::string memory_budget;  // "cpu=24GiB,cuda:0=60GiB"; empty: defaults
  int watch_interval_ms = 1000;
  int settle_ms = 2000;
  // Access control (docs/security.md). Keys never come from the command line: a file, or
  // the INFERD_API_KEY environment variable.
  std::string api_keys_file;
  bool allow_unauthenticated_management = false;
  // Proxies (IP addresses, comma-separated) whose X-Forwarded-For names the client when a
  // keyless loopback server asks whether a management request is local.
  std::string trusted_proxies;
  // TLS on both listeners when both are set.
  std::string tls_cert_file;
  std::string tls_key_file;
};

// Parses argv. Returns the options, or nullopt with `exit_code` set when the process should
// exit now (--help, --version, or a bad flag, already reported on the terminal).
std::optional<ServerOptions> ParseServerOptions(int argc, char** argv, int* exit_code);

}  // namespace inferd

#endif  // INFERD_SERVER_SERVER_OPTIONS_H_
