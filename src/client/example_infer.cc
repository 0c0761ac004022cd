// inferd_client_example: the C++ client in use. Sends the same two rows of features to a
// model over HTTP and gRPC, synchronously and asynchronously, and prints each answer as one
// JSON line; then shows an error answer (a wrong shape) as a Status.
//
//   build/inferd_client_example --http 127.0.0.1:8080 --grpc 127.0.0.1:8081 --model mlp_scorer
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/client.h"
#include "common/strings.h"

namespace {

using inferd::Client;
using inferd::InferResult;
using inferd::NamedTensor;

void Print(const std::string& transport, const absl::StatusOr<InferResult>& result) {
  if (!result.ok()) {
    std::printf("{\"transport\": \"%s\", \"error\": \"%s\"}\n", transport.c_str(),
                std::string(absl::StatusCodeToString(result.status().code())).c_str());
    return;
  }
  for (const NamedTensor& output : result->outputs) {
    std::string data;
    if (output.tensor.type() == inferd::DataType::kFp32) {
      for (int64_t i = 0; i < output.tensor.element_count(); ++i) {
        data += inferd::StrCat(i ? ", " : "", output.tensor.data_as<float>()[i]);
      }
    }
    std::printf(
        "{\"transport\": \"%s\", \"model_version\": \"%s\", \"output\": \"%s\", \"shape\": %s, "
        "\"data\": [%s]}\n",
        transport.c_str(), result->model_version.c_str(), output.name.c_str(),
        inferd::ShapeToString(output.tensor.shape()).c_str(), data.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string http = "127.0.0.1:8080";
  std::string grpc = "127.0.0.1:8081";
  std::string model = "mlp_scorer";
  std::string input = "features";
  int64_t features = 256;
  CLI::App app{"Runs a model over HTTP and gRPC with inferd's C++ client"};
  app.add_option("--http", http, "HTTP host:port");
  app.add_option("--grpc", grpc, "gRPC host:port");
  app.add_option("--model", model);
  app.add_option("--input", input, "the model's FP32 input");
  app.add_option("--features", features, "the input's row length");
  CLI11_PARSE(app, argc, argv);

  // Two rows: row r, column c holds (r + 1) * c / 1000.
  absl::StatusOr<inferd::Tensor> rows =
      inferd::Tensor::Allocate(inferd::DataType::kFp32, {2, features});
  if (!rows.ok()) return 1;
  for (int64_t i = 0; i < 2 * features; ++i) {
    rows->mutable_data_as<float>()[i] =
        static_cast<float>((i / features + 1) * (i % features)) / 1000.0f;
  }
  const std::vector<NamedTensor> inputs = {{input, *rows}};
  inferd::InferOptions options;
  options.model = model;
  options.id = "example";

  for (const auto& [name, address] : {std::pair{std::string("http"), http}, {"grpc", grpc}}) {
    absl::StatusOr<std::unique_ptr<Client>> client =
        name == "http" ? Client::CreateHttp(address) : Client::CreateGrpc(address);
    if (!client.ok()) {
      std::fprintf(stderr, "%s\n", std::string(client.status().message()).c_str());
      return 1;
    }
    absl::StatusOr<bool> ready = (*client)->IsModelReady(model);
    if (!ready.ok() || !*ready) {
      std::fprintf(stderr, "%s: model %s is not ready\n", name.c_str(), model.c_str());
      return 1;
    }
    Print(name + "-sync", (*client)->Infer(options, inputs));
    Print(name + "-async", (*client)->InferFuture(options, inputs).get());
    // A shape the model refuses comes back as the server's status.
    absl::StatusOr<inferd::Tensor> wrong =
        inferd::Tensor::Allocate(inferd::DataType::kFp32, {1, 3});
    Print(name + "-bad-shape", (*client)->Infer(options, {{input, *wrong}}));
  }
  return 0;
}
