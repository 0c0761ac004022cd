// inferd_latency_probe: sequential requests (one in flight) from the C++ client, to measure
// the latency a server adds at concurrency 1 without a Python client's own overhead in the
// number. Inputs are zeros of the shapes in the model's metadata (variable dimensions = 1).
// Prints one JSON line per transport: p50/p90/p99/mean in microseconds, and the p50 of
// ServerLive (a round trip that touches no model: the transport's own floor).
//
//   build/inferd_latency_probe --http 127.0.0.1:8080 --grpc 127.0.0.1:8081 -m mlp_scorer
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/client.h"

namespace {

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1))];
}

// The transport's floor: the same sequential loop on ServerLive, which touches no model.
double LiveP50(inferd::Client& client, int requests) {
  std::vector<double> latencies_us;
  for (int i = 0; i < requests; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> live = client.IsServerLive();
    const auto end = std::chrono::steady_clock::now();
    if (live.ok()) {
      latencies_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  return Percentile(latencies_us, 50);
}

int Probe(const std::string& transport, inferd::Client& client, const std::string& model,
          int warmup, int requests) {
  absl::StatusOr<inferd::ModelMetadata> metadata = client.GetModelMetadata(model);
  if (!metadata.ok()) {
    std::fprintf(stderr, "%s: %s\n", transport.c_str(),
                 std::string(metadata.status().message()).c_str());
    return 1;
  }
  std::vector<inferd::NamedTensor> inputs;
  for (const inferd::TensorMetadata& spec : metadata->inputs) {
    inferd::Shape shape;
    for (int64_t dim : spec.shape) shape.push_back(dim < 0 ? 1 : dim);
    std::optional<inferd::DataType> type = inferd::ParseDataType(spec.datatype);
    if (!type) return 1;
    absl::StatusOr<inferd::Tensor> tensor = inferd::Tensor::Allocate(*type, shape);
    if (!tensor.ok()) return 1;
    inputs.push_back({spec.name, *tensor});
  }
  inferd::InferOptions options;
  options.model = model;
  std::vector<double> latencies_us;
  int errors = 0;
  for (int i = 0; i < warmup + requests; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<inferd::InferResult> result = client.Infer(options, inputs);
    const auto end = std::chrono::steady_clock::now();
    if (!result.ok()) {
      ++errors;
      continue;
    }
    if (i >= warmup) {
      latencies_us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  const double live_p50 = LiveP50(client, std::min(requests, 2000));
  double sum = 0;
  for (double v : latencies_us) sum += v;
  std::printf(
      "{\"transport\": \"%s\", \"model\": \"%s\", \"requests\": %zu, \"errors\": %d, "
      "\"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"mean_us\": %.1f, "
      "\"server_live_p50_us\": %.1f}\n",
      transport.c_str(), model.c_str(), latencies_us.size(), errors, Percentile(latencies_us, 50),
      Percentile(latencies_us, 90), Percentile(latencies_us, 99),
      latencies_us.empty() ? 0.0 : sum / static_cast<double>(latencies_us.size()), live_p50);
  std::fflush(stdout);
  return errors > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string http;
  std::string grpc;
  std::string model = "mlp_scorer";
  int warmup = 200;
  int requests = 2000;
  CLI::App app{"Sequential-request latency of a KServe v2 server from the C++ client"};
  app.add_option("--http", http, "HTTP host:port (binary tensors)");
  app.add_option("--grpc", grpc, "gRPC host:port");
  app.add_option("-m,--model", model);
  app.add_option("--warmup", warmup);
  app.add_option("--requests", requests);
  CLI11_PARSE(app, argc, argv);
  int rc = 0;
  if (!http.empty()) {
    absl::StatusOr<std::unique_ptr<inferd::Client>> client = inferd::Client::CreateHttp(http);
    rc |= client.ok() ? Probe("http-binary", **client, model, warmup, requests) : 1;
  }
  if (!grpc.empty()) {
    absl::StatusOr<std::unique_ptr<inferd::Client>> client = inferd::Client::CreateGrpc(grpc);
    rc |= client.ok() ? Probe("grpc", **client, model, warmup, requests) : 1;
  }
  return rc;
}
