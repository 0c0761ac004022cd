#include "tests/fuzz/fuzz_server.h"

#include <stdlib.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>

#include <spdlog/spdlog.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/tenant.h"
#include "core/backend/backend.h"
#include "frontends/http/codecs/error_shape.h"
#include "observability/log_setup.h"

namespace inferd::fuzz {
namespace {

constexpr char kFp32Config[] = R"(backend: echo
max_batch_size: 8
dynamic_batching: {max_queue_delay_us: 100}
inputs:
  - {name: x, datatype: FP32, dims: [-1]}
outputs:
  - {name: y, datatype: FP32, dims: [-1]}
)";

constexpr char kTextConfig[] = R"(backend: echo
max_batch_size: 8
inputs:
  - {name: t, datatype: BYTES, dims: [1]}
outputs:
  - {name: u, datatype: BYTES, dims: [1]}
)";

constexpr char kMultiConfig[] = R"(backend: echo
inputs:
  - {name: a, datatype: INT64, dims: [-1, 3]}
  - {name: b, datatype: FP16, dims: [2]}
  - {name: c, datatype: BOOL, dims: [-1]}
  - {name: d, datatype: UINT8, dims: [-1]}
outputs:
  - {name: a, datatype: INT64, dims: [-1, 3]}
  - {name: b, datatype: FP16, dims: [2]}
  - {name: c, datatype: BOOL, dims: [-1]}
  - {name: d, datatype: UINT8, dims: [-1]}
)";

constexpr char kCanaryConfig[] = R"(backend: echo
version_policy: all
inputs:
  - {name: x, datatype: INT32, dims: [2]}
outputs:
  - {name: y, datatype: INT32, dims: [2]}
)";

// The demo's digits signature, so the demo's own sample.json is a seed (the echo answers
// with the 64 pixels, not 10 probabilities).
constexpr char kDigitsConfig[] = R"(backend: echo
max_batch_size: 64
inputs:
  - {name: pixels, datatype: FP32, dims: [64]}
outputs:
  - {name: probabilities, datatype: FP32, dims: [64]}
)";

// Returns its inputs as its outputs, after reading every byte of them.
class EchoModel : public BackendModel {
 public:
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    unsigned sum = 0;
    for (const Tensor& input : inputs) {
      for (size_t i = 0; i < input.byte_size(); ++i) sum += static_cast<unsigned>(input.data()[i]);
    }
    sink_.fetch_add(sum, std::memory_order_relaxed);
    return std::vector<Tensor>(inputs.begin(), inputs.end());
  }

 private:
  std::atomic<unsigned> sink_{0};
};

class EchoBackend : public Backend {
 public:
  std::string_view name() const override { return "echo"; }
  std::string_view platform() const override { return "echo_platform"; }
  std::string_view model_filename() const override { return "model.echo"; }
  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest&) override {
    return std::make_unique<EchoModel>();
  }
};

void Write(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

void AddModel(const std::filesystem::path& repo, const std::string& name, std::string_view config,
              std::initializer_list<int> versions) {
  Write(repo / name / "config.yaml", config);
  for (int v : versions) Write(repo / name / std::to_string(v) / "model.echo", "");
}

// Collects the one reply a request gets.
class WaitingResponder : public Responder {
 public:
  void Send(HttpReply reply) override {
    absl::MutexLock lock(&mu_);
    if (reply_) {
      std::fprintf(stderr, "fuzz: a request was answered twice\n");
      std::abort();
    }
    reply_ = std::move(reply);
  }
  void Defer(std::function<HttpReply()> make_reply) override { Send(make_reply()); }

  std::optional<HttpReply> Wait() {
    absl::MutexLock lock(&mu_);
    auto replied = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reply_.has_value(); };
    mu_.AwaitWithTimeout(absl::Condition(&replied), absl::Seconds(10));
    return reply_;
  }

 private:
  absl::Mutex mu_;
  std::optional<HttpReply> reply_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

constexpr std::array<std::string_view, 5> kModels = {"fp32", "text", "multi", "canary", "digits"};

void SilenceLogs() {
  (void)SetLogLevel("off");
  SetAccessLogEnabled(false);
  spdlog::set_level(spdlog::level::off);
}

std::pair<std::string_view, std::string_view> SplitFirstLine(std::string_view data) {
  const size_t newline = data.find('\n');
  if (newline == std::string_view::npos) return {data, {}};
  return {data.substr(0, newline), data.substr(newline + 1)};
}

FuzzServer& FuzzServer::Get() {
  static FuzzServer* server = new FuzzServer();  // never destroyed: scheduler threads run on
  return *server;
}

FuzzServer::FuzzServer() {
  SilenceLogs();
  std::string pattern = (std::filesystem::temp_directory_path() / "inferd_fuzz_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  repository_ = pattern;
  static std::string to_remove;
  to_remove = repository_;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(to_remove, ec);
  });
  const std::filesystem::path repo(repository_);
  AddModel(repo, "fp32", kFp32Config, {1});
  AddModel(repo, "text", kTextConfig, {1});
  AddModel(repo, "multi", kMultiConfig, {1});
  AddModel(repo, "canary", kCanaryConfig, {1, 2});
  AddModel(repo, "digits", kDigitsConfig, {1});

  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<EchoBackend>());
  models_ = std::make_unique<ModelManager>(repo, std::move(backends));
  if (absl::Status loaded = models_->LoadAll(); !loaded.ok()) {
    std::fprintf(stderr, "fuzz: loading the repository failed: %s\n",
                 std::string(loaded.message()).c_str());
    std::abort();
  }
  if (models_->ReadyModelNames().size() != kModels.size()) {
    std::fprintf(stderr, "fuzz: not every model of the fuzz repository loaded\n");
    std::abort();
  }
  static const std::atomic<bool> draining{false};
  inference_ = std::make_unique<InferencePath>(models_.get());
  router_ = std::make_unique<HttpRouter>(HandlerContext{{.inference = inference_.get(),
                                                         .models = models_.get(),
                                                         .server_version = "fuzz",
                                                         .draining = &draining,
                                                         .shared_memory = &shared_memory_}});
}

HttpReply FuzzServer::Call(HttpMethod method, std::string_view path, std::string_view query,
                           std::vector<std::pair<std::string_view, std::string_view>> headers,
                           std::string body) {
  auto responder = std::make_shared<WaitingResponder>();
  HttpRequestView request{method, path, query, &body, std::move(headers)};
  router_->Dispatch(request, responder);
  std::optional<HttpReply> reply = responder->Wait();
  if (!reply) {
    std::fprintf(stderr, "fuzz: no reply within 10 s\n");
    std::abort();
  }
  if (reply->status < 200 || reply->status > 599) {
    std::fprintf(stderr, "fuzz: HTTP status %u\n", reply->status);
    std::abort();
  }
  // Every error is a JSON object in its path's protocol's shape (error_shape.h): Anthropic's
  // Messages API puts "type" first, every other protocol "error".
  const std::string_view error_start = ErrorShapeOf(path) == ErrorShape::kAnthropic
                                           ? "{\"type\":\"error\",\"error\":{"
                                           : "{\"error\":";
  if (reply->status >= 400 && reply->body.rfind(error_start, 0) != 0) {
    std::fprintf(stderr, "fuzz: error reply %u does not start %.*s: %s\n", reply->status,
                 static_cast<int>(error_start.size()), error_start.data(),
                 reply->body.substr(0, 200).c_str());
    std::abort();
  }
  return *std::move(reply);
}

void FuzzServer::Restore() {
  SilenceLogs();
  shared_memory_.UnregisterAll(TenantOwner(nullptr));  // the fuzzers send no keys
  if (absl::StatusOr<TrafficRules> rules = models_->GetTrafficRules("canary");
      !rules.ok() || *rules != TrafficRules{}) {
    (void)models_->SetTrafficRules("canary", TrafficRules{});
  }
  if (models_->ReadyModelNames().size() == kModels.size()) return;
  for (std::string_view name : kModels) {
    if (absl::Status loaded = models_->Load(name); !loaded.ok()) {
      std::fprintf(stderr, "fuzz: model %s does not load again: %s\n", std::string(name).c_str(),
                   std::string(loaded.message()).c_str());
      std::abort();
    }
  }
}

}  // namespace inferd::fuzz
