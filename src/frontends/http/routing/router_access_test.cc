// HttpRouter's access checks: the one made from a request's header before its body is read
// (RefuseBeforeBody), and the keyless rule for management relayed by a proxy.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "auth/access_policy.h"
#include "auth/key_file.h"
#include "common/fake_time_source.h"
#include "core/testing/temp_dir.h"
#include "frontends/http/routing/router.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr char kKeys[] = R"(
keys:
  - {name: ops, key: ops-key-0123456789, roles: [management]}
  - {name: bob-app, key: bob-key-0123456789, roles: [inference], tenant: bob}
tenants:
  bob: {max_in_flight: 1}
)";

class OneReply : public Responder {
 public:
  void Send(HttpReply reply) override { replies.push_back(std::move(reply)); }
  void Defer(std::function<HttpReply()> make_reply) override { Send(make_reply()); }
  std::vector<HttpReply> replies;
};

using Headers = std::vector<std::pair<std::string_view, std::string_view>>;

class RouterAccessTest : public ::testing::Test {
 protected:
  void Start(AccessPolicyOptions options) {
    models_ = std::make_unique<ModelManager>(repo_.path(), std::vector<std::unique_ptr<Backend>>());
    ASSERT_TRUE(models_->LoadAll().ok());
    inference_ = std::make_unique<InferencePath>(models_.get(), "");
    policy_ = std::make_unique<AccessPolicy>(std::move(options));
    router_ = std::make_unique<HttpRouter>(HandlerContext{{.inference = inference_.get(),
                                                           .models = models_.get(),
                                                           .server_version = "test",
                                                           .draining = &draining_,
                                                           .access = policy_.get()}});
  }
  void StartWithKeys() {
    absl::StatusOr<std::unique_ptr<KeyRing>> ring =
        ParseKeyFile(kKeys, "keys", &time_, [](const char*) { return nullptr; });
    ASSERT_TRUE(ring.ok()) << ring.status();
    ring_ = *std::move(ring);
    Start(AccessPolicyOptions{ring_.get(), KeylessManagement::kOff, {}});
  }

  static HttpRequestView Head(HttpMethod method, std::string_view path, Headers headers,
                              std::string_view peer = "127.0.0.1") {
    HttpRequestView head{method, path, "", nullptr, std::move(headers)};
    head.peer = peer;
    return head;
  }

  FakeTimeSource time_;
  TempDir repo_{"inferd_router_access"};
  std::atomic<bool> draining_{false};
  std::unique_ptr<KeyRing> ring_;
  std::unique_ptr<ModelManager> models_;
  std::unique_ptr<InferencePath> inference_;
  std::unique_ptr<AccessPolicy> policy_;
  std::unique_ptr<HttpRouter> router_;
};

// Regression (issue 30): the key was checked only after the whole body was read.
TEST_F(RouterAccessTest, RefusesABadKeyFromTheHeaderAlone) {
  StartWithKeys();
  std::optional<HttpReply> refused = router_->RefuseBeforeBody(
      Head(HttpMethod::kPost, "/v2/models/m/infer", {{"Authorization", "Bearer wrong-key-xyz"}}));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 401u);
  refused = router_->RefuseBeforeBody(Head(HttpMethod::kPost, "/v2/models/m/infer", {}));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 401u);
  // A key without the route's role: 403, also before the body.
  refused = router_->RefuseBeforeBody(Head(HttpMethod::kPost, "/v2/repository/models/m/unload",
                                           {{"Authorization", "Bearer bob-key-0123456789"}}));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403u);
  EXPECT_FALSE(router_->RefuseBeforeBody(Head(HttpMethod::kGet, "/v2/health/live", {})));
}

TEST_F(RouterAccessTest, TheEarlyCheckTakesNoTenantSlot) {
  StartWithKeys();
  const Headers bob = {{"Authorization", "Bearer bob-key-0123456789"}};
  // bob may have one request in flight: two early checks and then the request itself.
  EXPECT_FALSE(router_->RefuseBeforeBody(Head(HttpMethod::kPost, "/v2/models/m/infer", bob)));
  EXPECT_FALSE(router_->RefuseBeforeBody(Head(HttpMethod::kPost, "/v2/models/m/infer", bob)));
  std::string body = "{}";
  HttpRequestView request = Head(HttpMethod::kPost, "/v2/models/m/infer", bob);
  request.body = &body;
  auto responder = std::make_shared<OneReply>();
  router_->Dispatch(request, responder);
  ASSERT_EQ(responder->replies.size(), 1u);
  EXPECT_EQ(responder->replies[0].status, 404u);  // no model m: past access, not 429
}

// Regression (issue 30): nginx on the same host relayed anyone's management requests to a
// keyless server on loopback.
TEST_F(RouterAccessTest, KeylessLoopbackManagementRefusesRelayedRequests) {
  absl::StatusOr<TrustedProxies> none = TrustedProxies::Parse("");
  ASSERT_TRUE(none.ok());
  Start(AccessPolicyOptions{nullptr, KeylessManagement::kLocalClients, *none});
  const std::string_view unload = "/v2/repository/models/m/unload";
  EXPECT_FALSE(router_->RefuseBeforeBody(Head(HttpMethod::kPost, unload, {})));
  for (std::string_view header : {"X-Forwarded-For", "Forwarded", "X-Real-IP"}) {
    std::optional<HttpReply> refused =
        router_->RefuseBeforeBody(Head(HttpMethod::kPost, unload, {{header, "127.0.0.1"}}));
    ASSERT_TRUE(refused.has_value()) << header;
    EXPECT_EQ(refused->status, 403u);
    EXPECT_THAT(refused->body, HasSubstr("--trusted-proxies"));
  }
  EXPECT_TRUE(router_->RefuseBeforeBody(Head(HttpMethod::kPost, unload, {}, "10.0.0.9")));
  // Inference and monitoring stay open to relayed clients.
  EXPECT_FALSE(router_->RefuseBeforeBody(
      Head(HttpMethod::kPost, "/v2/models/m/infer", {{"X-Forwarded-For", "203.0.113.7"}})));
  EXPECT_FALSE(router_->RefuseBeforeBody(
      Head(HttpMethod::kGet, "/metrics", {{"X-Forwarded-For", "203.0.113.7"}})));
}

TEST_F(RouterAccessTest, ATrustedProxysLocalClientMayManage) {
  absl::StatusOr<TrustedProxies> trusted = TrustedProxies::Parse("127.0.0.1");
  ASSERT_TRUE(trusted.ok());
  Start(AccessPolicyOptions{nullptr, KeylessManagement::kLocalClients, *trusted});
  const std::string_view unload = "/v2/repository/models/m/unload";
  EXPECT_FALSE(router_->RefuseBeforeBody(
      Head(HttpMethod::kPost, unload, {{"X-Forwarded-For", "127.0.0.1"}})));
  EXPECT_TRUE(router_->RefuseBeforeBody(
      Head(HttpMethod::kPost, unload, {{"X-Forwarded-For", "127.0.0.1, 203.0.113.7"}})));
}

}  // namespace
}  // namespace inferd
