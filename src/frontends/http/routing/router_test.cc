#include "frontends/http/routing/router.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/testing/fake_backend.h"
#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using testing::DoublingModel;
using ::testing::ElementsAre;
using testing::FakeBackend;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;
using testing::TempDir;
using testing::WriteFile;

// Records every reply; Defer runs the encoder on the calling (execution) thread.
class RecordingResponder : public Responder {
 public:
  void Send(HttpReply reply) override {
    absl::MutexLock lock(&mu_);
    replies_.push_back(std::move(reply));
  }
  void Defer(std::function<HttpReply()> make_reply) override { Send(make_reply()); }

  // Waits (bounded, for inference replies that come from an execution thread) for a reply.
  bool WaitForReply() const {
    absl::MutexLock lock(&mu_);
    auto replied = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !replies_.empty(); };
    return mu_.AwaitWithTimeout(absl::Condition(&replied), absl::Seconds(10));
  }
  std::vector<HttpReply> replies() const {
    absl::MutexLock lock(&mu_);
    return replies_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<HttpReply> replies_ ABSL_GUARDED_BY(mu_);
};

// Once armed, holds Execute calls of the models that share it until it opens (unarmed, the
// load's warm-up passes).
class Gate {
 public:
  void Arm() {
    absl::MutexLock lock(&mu_);
    armed_ = true;
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void Pass() {
    absl::MutexLock lock(&mu_);
    if (!armed_) return;
    ++entered_;
    auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_; };
    mu_.Await(absl::Condition(&open));
  }
  // Waits until `n` calls have reached the gate; false on a hang.
  bool WaitForEntered(int n) {
    absl::MutexLock lock(&mu_);
    auto entered = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entered_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&entered), absl::Seconds(10));
  }

 private:
  absl::Mutex mu_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
};

class RouterTest : public ::testing::Test {
 protected:
  // Loads the temp repository (empty unless a test added models) and builds the router.
  void Start(bool with_fake_backend = false, std::string default_model = "", Gate* gate = nullptr) {
    std::vector<std::unique_ptr<Backend>> backends;
    // Models named "gated" wait at `gate` before they execute.
    if (with_fake_backend) {
      backends.push_back(std::make_unique<FakeBackend>(
          [gate](const BackendLoadRequest& request) -> std::unique_ptr<BackendModel> {
            if (gate == nullptr || request.config->name != "gated") {
              return std::make_unique<DoublingModel>();
            }
            return std::make_unique<DoublingModel>(DataType::kFp32, [gate] { gate->Pass(); });
          }));
    }
    models_ = std::make_unique<ModelManager>(repo_.path(), std::move(backends));
    ASSERT_TRUE(models_->LoadAll().ok());
    inference_ = std::make_unique<InferencePath>(models_.get(), default_model);
    router_ = std::make_unique<HttpRouter>(HandlerContext{{.inference = inference_.get(),
                                                           .models = models_.get(),
                                                           .server_version = "9.9.9-test",
                                                           .draining = &draining_}});
  }

  // Dispatches one request; its reply arrives through the returned responder.
  std::shared_ptr<RecordingResponder> Send(
      HttpMethod method, std::string_view path, std::string body = "",
      std::vector<std::pair<std::string_view, std::string_view>> headers = {}) {
    auto responder = std::make_shared<RecordingResponder>();
    bodies_.push_back(std::make_unique<std::string>(std::move(body)));
    HttpRequestView request{method, path, "", bodies_.back().get(), std::move(headers)};
    router_->Dispatch(request, responder);
    return responder;
  }

  // The only reply `responder` got (waiting for it).
  static HttpReply ReplyOf(const RecordingResponder& responder, std::string_view what) {
    EXPECT_TRUE(responder.WaitForReply()) << "no reply to " << what;
    const std::vector<HttpReply> replies = responder.replies();
    EXPECT_EQ(replies.size(), 1u) << what;
    return replies.empty() ? HttpReply{0, "", "", {}} : replies.front();
  }

  // Dispatches one request and returns its only reply.
  HttpReply Call(HttpMethod method, std::string_view path, std::string_view query = "",
                 std::string body = "",
                 std::vector<std::pair<std::string_view, std::string_view>> headers = {}) {
    auto responder = std::make_shared<RecordingResponder>();
    HttpRequestView request{method, path, query, &body, std::move(headers)};
    router_->Dispatch(request, responder);
    return ReplyOf(*responder, path);
  }
  HttpReply Get(std::string_view path) { return Call(HttpMethod::kGet, path); }
  HttpReply Post(std::string_view path, std::string body, std::string_view query = "") {
    return Call(HttpMethod::kPost, path, query, std::move(body));
  }

  TempDir repo_{"inferd_router"};
  std::atomic<bool> draining_{false};
  std::unique_ptr<ModelManager> models_;
  std::unique_ptr<InferencePath> inference_;
  std::unique_ptr<HttpRouter> router_;
  std::vector<std::unique_ptr<std::string>> bodies_;  // of requests still in flight
};

TEST_F(RouterTest, HealthLive) {
  Start();
  const HttpReply reply = Get("/v2/health/live");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"live":true})");
  EXPECT_EQ(reply.content_type, "application/json");
}

TEST_F(RouterTest, HealthReadyTurnsFalseWhileDraining) {
  Start();
  HttpReply reply = Get("/v2/health/ready");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"ready":true})");

  draining_ = true;
  reply = Get("/v2/health/ready");
  EXPECT_EQ(reply.status, 503u);
  EXPECT_EQ(reply.body, R"({"ready":false})");
  // Liveness is unaffected.
  EXPECT_EQ(Get("/v2/health/live").status, 200u);
}

TEST_F(RouterTest, ServerMetadata) {
  Start();
  const HttpReply reply = Get("/v2");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(
      reply.body,
      R"({"name":"inferd","version":"9.9.9-test","extensions":["model_repository","statistics","binary_tensor_data"]})");
  EXPECT_EQ(Get("/v2/").status, 200u);  // a trailing slash is the same path
}

TEST_F(RouterTest, UnknownModelIsNotFound) {
  Start();
  const HttpReply reply = Get("/v2/models/nope");
  EXPECT_EQ(reply.status, 404u);
  EXPECT_EQ(reply.body, R"({"error":"unknown model 'nope'"})");
  EXPECT_EQ(Get("/v2/models/nope/ready").status, 404u);
  EXPECT_EQ(Get("/v2/models/nope/versions/2").status, 404u);
  const HttpReply infer = Post("/v2/models/nope/infer", R"({"inputs": []})");
  EXPECT_EQ(infer.status, 404u);
  EXPECT_THAT(infer.body, StartsWith(R"({"error":)"));
}

TEST_F(RouterTest, RepositoryIndexOfEmptyRepository) {
  Start();
  const HttpReply reply = Post("/v2/repository/index", "");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, "[]");
}

TEST_F(RouterTest, WrongMethodIs405WithAllowHeader) {
  Start();
  HttpReply reply = Call(HttpMethod::kPost, "/v2/health/live");
  EXPECT_EQ(reply.status, 405u);
  EXPECT_THAT(reply.headers, ElementsAre(Pair("Allow", "GET")));
  EXPECT_THAT(reply.body, HasSubstr("this path takes GET"));

  reply = Get("/v2/repository/index");
  EXPECT_EQ(reply.status, 405u);
  EXPECT_THAT(reply.headers, ElementsAre(Pair("Allow", "POST")));

  EXPECT_EQ(Call(HttpMethod::kPost, "/v2").status, 405u);
  EXPECT_EQ(Get("/predict").status, 405u);
  EXPECT_EQ(Get("/v2/models/m/infer").status, 405u);
  EXPECT_EQ(Call(HttpMethod::kPost, "/v2/models/m").status, 405u);
  EXPECT_EQ(Call(HttpMethod::kPost, "/v2/models/m/ready").status, 405u);
  EXPECT_EQ(Call(HttpMethod::kOther, "/v2/health/ready").status, 405u);
}

TEST_F(RouterTest, UnknownPathIsNotFound) {
  Start();
  for (std::string_view path :
       {"/", "/foo", "/v3/health/live", "/v2/health", "/v2/health/dead", "/v2/models",
        "/v2/models/m/explain", "/v2/models/m/versions/1/infer/more", "/v1/models/m/more"}) {
    const HttpReply reply = Get(path);
    EXPECT_EQ(reply.status, 404u) << path;
    EXPECT_THAT(reply.body, HasSubstr("unknown path")) << path;
  }
  // GET /v1/models/M is OpenAI's model lookup: m is not a language model.
  const HttpReply model = Get("/v1/models/m");
  EXPECT_EQ(model.status, 404u);
  EXPECT_THAT(model.body, HasSubstr("no model 'm' that generates text"));
}

TEST_F(RouterTest, NonNumericVersionIsBadRequest) {
  Start();
  HttpReply reply = Get("/v2/models/m/versions/abc");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_EQ(reply.body, R"({"error":"'abc' is not a version number"})");
  EXPECT_EQ(Get("/v2/models/m/versions/007/ready").status, 400u);
  reply = Get("/v2/models/m/versions");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, HasSubstr("missing version"));
}

TEST_F(RouterTest, PlainPredictWithoutModelsAsksForDefaultModel) {
  Start();
  const HttpReply reply = Post("/predict", R"({"input": [1, 2]})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, AllOf(HasSubstr("?model=NAME"), HasSubstr("--default-model")));
}

TEST_F(RouterTest, PlainPredictOfUnknownModelIsNotFound) {
  Start();
  EXPECT_EQ(Post("/predict", R"({"input": [1]})", "model=nope").status, 404u);
}

TEST_F(RouterTest, TfServingPredictOfUnknownModelIsNotFound) {
  Start();
  const HttpReply reply = Post("/v1/models/m:predict", R"({"instances": [[1]]})");
  EXPECT_EQ(reply.status, 404u);
  EXPECT_EQ(reply.body, R"({"error":"unknown model 'm'"})");
  EXPECT_EQ(Post("/v1/models/m/versions/3:predict", R"({"instances": [[1]]})").status, 404u);
  EXPECT_EQ(Post("/v1/models/m/versions/x:predict", R"({"instances": [[1]]})").status, 400u);
}

TEST_F(RouterTest, TfServingLabelOfUnknownModelIsNotFound) {
  Start();
  const HttpReply reply = Post("/v1/models/m/labels/stable:predict", R"({"instances": [[1]]})");
  EXPECT_EQ(reply.status, 404u);
  EXPECT_THAT(reply.body, HasSubstr("unknown model 'm'"));
}

TEST_F(RouterTest, TfServingPredictTakesOnlyPost) {
  Start();
  const HttpReply reply = Get("/v1/models/m:predict");
  EXPECT_EQ(reply.status, 405u);
  EXPECT_THAT(reply.headers, ElementsAre(Pair("Allow", "POST")));
}

TEST_F(RouterTest, IndexListsUnavailableModelsWithReasons) {
  WriteFile(repo_.path() / "bad" / "config.yaml", "backend: [\n");
  WriteFile(repo_.path() / "resnet" / "config.yaml", R"(
backend: torch
inputs:
  - {name: x, datatype: FP32, dims: [3]}
outputs:
  - {name: y, datatype: FP32, dims: [3]}
)");
  std::filesystem::create_directories(repo_.path() / "resnet" / "1");
  Start();

  const HttpReply reply = Post("/v2/repository/index", "");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_THAT(reply.body, AllOf(StartsWith(R"([{"name":"bad","state":"UNAVAILABLE","reason":")"),
                                HasSubstr("bad/config.yaml: line "),
                                HasSubstr(R"({"name":"resnet","state":"UNAVAILABLE","reason":")"),
                                HasSubstr("backend: 'torch' is not available in this build")));

  HttpReply ready = Get("/v2/models/bad/ready");
  EXPECT_EQ(ready.status, 503u);
  EXPECT_THAT(ready.body, AllOf(StartsWith(R"({"name":"bad","ready":false,"reason":")"),
                                HasSubstr("config.yaml")));
  EXPECT_EQ(Get("/v2/models/resnet").status, 503u);
}

constexpr char kDoubleConfig[] = R"(
backend: fake
max_batch_size: 4
inputs:
  - {name: x, datatype: FP32, dims: [2]}
outputs:
  - {name: y, datatype: FP32, dims: [2]}
)";

class RouterWithModelTest : public RouterTest {
 protected:
  void SetUp() override {
    WriteFile(repo_.path() / "double" / "config.yaml", kDoubleConfig);
    WriteFile(repo_.path() / "double" / "1" / "model.fake", "weights");
    WriteFile(repo_.path() / "double" / "2" / "model.fake", "weights");
    Start(/*with_fake_backend=*/true);
  }
};

TEST_F(RouterWithModelTest, ModelMetadata) {
  const HttpReply reply = Get("/v2/models/double");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"name":"double","versions":["2"],"platform":"fake_platform",)"
                        R"("inputs":[{"name":"x","datatype":"FP32","shape":[-1,2]}],)"
                        R"("outputs":[{"name":"y","datatype":"FP32","shape":[-1,2]}]})");
  EXPECT_EQ(Get("/v2/models/double/versions/2").body, reply.body);
  const HttpReply old = Get("/v2/models/double/versions/1");
  EXPECT_EQ(old.status, 404u);
  EXPECT_THAT(old.body, HasSubstr("has no version 1 (served: 2)"));
}

TEST_F(RouterWithModelTest, ModelReady) {
  const HttpReply reply = Get("/v2/models/double/ready");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"name":"double","ready":true})");
}

TEST_F(RouterWithModelTest, RepositoryIndexListsReadyModel) {
  EXPECT_EQ(Post("/v2/repository/index", "").body,
            R"([{"name":"double","version":"2","state":"READY","reason":""}])");
}

TEST_F(RouterWithModelTest, KserveInfer) {
  const HttpReply reply = Post("/v2/models/double/infer", R"({
    "id": "r1",
    "inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [1, 2.5, -3, 0.25]}]
  })");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"model_name":"double","model_version":"2","id":"r1","outputs":[)"
                        R"({"name":"y","datatype":"FP32","shape":[2,2],"data":[2,5,-6,0.5]}]})");
}

TEST_F(RouterWithModelTest, KserveInferRejectsBadRequests) {
  HttpReply reply = Post("/v2/models/double/infer",
                         R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3],)"
                         R"( "data": [1, 2, 3]}]})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, HasSubstr("dimension 1 must be 2"));

  reply = Post("/v2/models/double/infer", "not json");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, HasSubstr("not valid JSON"));

  reply = Post("/v2/models/double/infer",
               R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2],)"
               R"( "data": [1, 2]}], "outputs": [{"name": "z"}]})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, HasSubstr("unknown requested output 'z'"));
}

TEST_F(RouterWithModelTest, PlainPredictUsesTheOnlyModelAndDropsTheBatchDimension) {
  HttpReply reply = Post("/predict", R"({"input": [1, 2]})");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"output":[2,4]})");

  reply = Post("/predict", R"({"input": [[1, 2], [3, 4]]})", "model=double");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"output":[[2,4],[6,8]]})");

  reply = Post("/predict", R"({"x": [1, 2]})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, HasSubstr("input"));
}

TEST_F(RouterWithModelTest, TfServingPredictRowAndColumnarFormats) {
  HttpReply reply = Post("/v1/models/double:predict", R"({"instances": [[1, 2], [3, 4]]})");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"predictions":[[2,4],[6,8]]})");

  reply = Post("/v1/models/double/versions/2:predict", R"({"inputs": [[0.5, 1]]})");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"outputs":[[1,2]]})");

  reply = Post("/v1/models/double:predict", R"({"instances": [[1, 2]], "inputs": [[1, 2]]})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body, HasSubstr("exactly one of"));
}

// --- statistics -----------------------------------------------------------------------------

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  EXPECT_FALSE(doc.HasParseError()) << text;
  return doc;
}

TEST_F(RouterWithModelTest, StatsCountInferencesAndBatches) {
  ASSERT_EQ(Post("/v2/models/double/infer",
                 R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [3, 2],)"
                 R"( "data": [1, 2, 3, 4, 5, 6]}]})")
                .status,
            200u);
  ASSERT_EQ(Post("/v2/models/double/infer",
                 R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2],)"
                 R"( "data": [1, 2]}]})")
                .status,
            200u);

  const HttpReply reply = Get("/v2/models/stats");
  ASSERT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.content_type, "application/json");
  const rapidjson::Document doc = ParseJson(reply.body);
  ASSERT_TRUE(doc.IsObject() && doc.HasMember("model_stats")) << reply.body;
  const auto& models = doc["model_stats"];
  ASSERT_TRUE(models.IsArray());
  ASSERT_EQ(models.Size(), 1u) << reply.body;
  const auto& m = models[0];
  EXPECT_STREQ(m["name"].GetString(), "double");
  EXPECT_STREQ(m["version"].GetString(), "2");
  EXPECT_EQ(m["inference_count"].GetUint64(), 4u);
  EXPECT_EQ(m["execution_count"].GetUint64(), 2u);
  EXPECT_EQ(m["queue_depth"].GetUint64(), 0u);
  EXPECT_GT(m["last_inference"].GetInt64(), 0);
  const auto& inference = m["inference_stats"];
  EXPECT_EQ(inference["success"]["count"].GetUint64(), 2u);
  EXPECT_EQ(inference["fail"]["count"].GetUint64(), 0u);
  EXPECT_EQ(inference["queue"]["count"].GetUint64(), 2u);
  EXPECT_EQ(inference["compute_infer"]["count"].GetUint64(), 2u);
  EXPECT_TRUE(inference["compute_infer"]["ns"].IsUint64());
  const auto& batches = m["batch_stats"];
  ASSERT_TRUE(batches.IsArray());
  ASSERT_EQ(batches.Size(), 2u) << reply.body;
  EXPECT_EQ(batches[0]["batch_size"].GetInt64(), 1);
  EXPECT_EQ(batches[0]["compute_infer"]["count"].GetUint64(), 1u);
  EXPECT_EQ(batches[1]["batch_size"].GetInt64(), 3);
  const auto& batching = m["batching"];
  // max_batch_size 4 and no dynamic_batching section: batching by default, no queue delay.
  EXPECT_TRUE(batching["dynamic"].GetBool());
  EXPECT_STREQ(batching["source"].GetString(), "default");
  EXPECT_EQ(batching["max_queue_delay_us"].GetInt64(), 0);
  EXPECT_EQ(batching["max_batch_size"].GetInt64(), 4);
  EXPECT_FALSE(batching.HasMember("auto_tune"));
  // The fake engine offers no thread counts: nothing is timed, and the reason says so.
  const auto& threads = m["intra_op_threads"];
  EXPECT_EQ(threads["count"].GetInt(), 0);
  EXPECT_THAT(threads["reason"].GetString(), HasSubstr("does not say"));
  EXPECT_EQ(threads["probe"].Size(), 0u);

  // The same object for the model alone, by name and by version.
  const HttpReply one = Get("/v2/models/double/stats");
  EXPECT_EQ(one.status, 200u);
  EXPECT_EQ(one.body, reply.body);
  EXPECT_EQ(Get("/v2/models/double/versions/2/stats").body, reply.body);
}

TEST_F(RouterWithModelTest, StatsOfUnknownModelOrVersionIsNotFound) {
  EXPECT_EQ(Get("/v2/models/nope/stats").status, 404u);
  const HttpReply old = Get("/v2/models/double/versions/1/stats");
  EXPECT_EQ(old.status, 404u);
  EXPECT_THAT(old.body, HasSubstr("has no version 1"));
  const HttpReply post = Call(HttpMethod::kPost, "/v2/models/stats");
  EXPECT_EQ(post.status, 405u);
  EXPECT_THAT(post.headers, ElementsAre(Pair("Allow", "GET")));
  EXPECT_EQ(Call(HttpMethod::kPost, "/v2/models/double/stats").status, 405u);
}

TEST_F(RouterTest, StatsOfEmptyRepository) {
  Start();
  const HttpReply reply = Get("/v2/models/stats");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, R"({"model_stats":[]})");
}

// --- queue policy through HTTP ------------------------------------------------------------

constexpr char kGatedConfig[] = R"(
backend: fake
max_batch_size: 4
inputs:
  - {name: x, datatype: FP32, dims: [2]}
outputs:
  - {name: y, datatype: FP32, dims: [2]}
queue: {max_queue_size: 1, priority_levels: 2}
)";

constexpr char kOneRow[] =
    R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}]})";

// Once loaded, "gated" executes only when the test opens the gate; its queue holds one
// request.
class RouterWithGatedModelTest : public RouterTest {
 protected:
  void SetUp() override {
    WriteFile(repo_.path() / "gated" / "config.yaml", kGatedConfig);
    WriteFile(repo_.path() / "gated" / "1" / "model.fake", "weights");
    Start(/*with_fake_backend=*/true, "", &gate_);
    gate_.Arm();
  }
  void TearDown() override { gate_.Open(); }  // nothing may stay blocked at teardown

  Gate gate_;
};

TEST_F(RouterWithGatedModelTest, FullQueueIs429WithRetryAfter) {
  auto running = Send(HttpMethod::kPost, "/v2/models/gated/infer", kOneRow);
  ASSERT_TRUE(gate_.WaitForEntered(1));
  auto queued = Send(HttpMethod::kPost, "/v2/models/gated/infer", kOneRow);
  // The queue holds one: the next is refused at once, before the gate opens.
  const HttpReply refused = Post("/v2/models/gated/infer", kOneRow);
  EXPECT_EQ(refused.status, 429u);
  EXPECT_THAT(refused.headers, ElementsAre(Pair("Retry-After", "1")));
  EXPECT_THAT(refused.body, AllOf(HasSubstr("gated:1"), HasSubstr("max_queue_size 1")));

  gate_.Open();
  EXPECT_EQ(ReplyOf(*running, "running").status, 200u);
  EXPECT_EQ(ReplyOf(*queued, "queued").status, 200u);
  const rapidjson::Document stats = ParseJson(Get("/v2/models/gated/stats").body);
  EXPECT_EQ(stats["model_stats"][0]["inference_stats"]["fail"]["count"].GetUint64(), 1u);
  EXPECT_EQ(stats["model_stats"][0]["inference_stats"]["success"]["count"].GetUint64(), 2u);
}

TEST_F(RouterWithGatedModelTest, RequestThatTimesOutInTheQueueIs504) {
  auto running = Send(HttpMethod::kPost, "/v2/models/gated/infer", kOneRow);
  ASSERT_TRUE(gate_.WaitForEntered(1));
  // A 1 us timeout has passed by the time the instance is free again.
  auto late = Send(HttpMethod::kPost, "/v2/models/gated/infer",
                   R"({"parameters": {"timeout": 1}, "inputs": [{"name": "x", "datatype": "FP32",)"
                   R"( "shape": [1, 2], "data": [1, 2]}]})");
  gate_.Open();
  EXPECT_EQ(ReplyOf(*running, "running").status, 200u);
  const HttpReply reply = ReplyOf(*late, "late");
  EXPECT_EQ(reply.status, 504u);
  EXPECT_THAT(reply.body, HasSubstr("past its timeout of 1 us"));
}

TEST_F(RouterWithGatedModelTest, TimeoutHeaderBoundsTheQueueWait) {
  auto running = Send(HttpMethod::kPost, "/v2/models/gated/infer", kOneRow);
  ASSERT_TRUE(gate_.WaitForEntered(1));
  auto late =
      Send(HttpMethod::kPost, "/predict", R"({"input": [1, 2]})", {{"Inference-Timeout-Us", "1"}});
  gate_.Open();
  EXPECT_EQ(ReplyOf(*running, "running").status, 200u);
  const HttpReply reply = ReplyOf(*late, "late");
  EXPECT_EQ(reply.status, 504u);
  EXPECT_THAT(reply.body, HasSubstr("timeout"));
}

TEST_F(RouterWithModelTest, MalformedTimeoutHeaderIsBadRequest) {
  for (std::string_view path :
       {"/v2/models/double/infer", "/predict", "/v1/models/double:predict"}) {
    const std::string body = path == "/predict"         ? R"({"input": [1, 2]})"
                             : path.starts_with("/v1/") ? R"({"instances": [[1, 2]]})"
                                                        : std::string(kOneRow);
    HttpReply reply = Call(HttpMethod::kPost, path, "", body, {{"Inference-Timeout-Us", "soon"}});
    EXPECT_EQ(reply.status, 400u) << path;
    EXPECT_THAT(reply.body, AllOf(HasSubstr("Inference-Timeout-Us"), HasSubstr("'soon'"))) << path;
    reply = Call(HttpMethod::kPost, path, "", body, {{"Inference-Timeout-Us", "-5"}});
    EXPECT_EQ(reply.status, 400u) << path;
    // A well-formed value is accepted.
    reply = Call(HttpMethod::kPost, path, "", body, {{"inference-timeout-us", "60000000"}});
    EXPECT_EQ(reply.status, 200u) << path << ": " << reply.body;
  }
}

TEST_F(RouterWithModelTest, PriorityOutsideTheModelsLevelsIsBadRequest) {
  HttpReply reply =
      Post("/v2/models/double/infer", R"({"parameters": {"priority": 2}, "inputs": [{"name": "x",)"
                                      R"( "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}]})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_THAT(reply.body,
              AllOf(HasSubstr("priority 2 is out of range"), HasSubstr("1 (highest) to 1")));
  reply = Post("/v2/models/double/infer",
               R"({"parameters": {"priority": 1, "timeout": 60000000}, "inputs": [{"name": "x",)"
               R"( "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}]})");
  EXPECT_EQ(reply.status, 200u) << reply.body;
}

}  // namespace
}  // namespace inferd
