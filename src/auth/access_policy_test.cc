#include "auth/access_policy.h"

#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "auth/key_file.h"
#include "common/fake_time_source.h"

namespace inferd {
namespace {

using ::testing::HasSubstr;

constexpr char kKeys[] = R"(
keys:
  - {name: ops, key: ops-key-0123456789, roles: [management]}
  - {name: watcher, key: watch-key-0123456789, roles: [monitoring]}
  - {name: alice-app, key: alice-key-0123456789, roles: [inference], tenant: alice}
  - {name: bob-app, key: bob-key-0123456789, roles: [inference], tenant: bob}
tenants:
  alice: {requests_per_second: 1, burst: 2, priority: 3, models: [digits]}
  bob: {max_in_flight: 1}
)";

RouteAccess Infer(std::string_view model) { return RouteAccess::ForModel(model); }
const RouteAccess kManage = RouteAccess::Of(Access::kManagement);
const RouteAccess kMonitor = RouteAccess::Of(Access::kMonitoring);
const RouteAccess kHealth = RouteAccess::Of(Access::kPublic);

class AccessPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<KeyRing>> ring =
        ParseKeyFile(kKeys, "keys", &time_, [](const char*) { return nullptr; });
    ASSERT_TRUE(ring.ok()) << ring.status();
    ring_ = *std::move(ring);
    policy_ = std::make_unique<AccessPolicy>(
        AccessPolicyOptions{ring_.get(), KeylessManagement::kAnyone, {}});
  }

  absl::Status Check(const RouteAccess& route, std::string_view authorization) {
    grant_ = AccessGrant();
    denial_ = AccessDenial();
    return policy_->Check(route, authorization, &grant_, &denial_);
  }

  FakeTimeSource time_;
  std::unique_ptr<KeyRing> ring_;
  std::unique_ptr<AccessPolicy> policy_;
  AccessGrant grant_;
  AccessDenial denial_;
};

TEST_F(AccessPolicyTest, HealthNeedsNoKey) { EXPECT_TRUE(Check(kHealth, "").ok()); }

TEST_F(AccessPolicyTest, NoKeyOrAWrongKeyIsUnauthenticated) {
  absl::Status missing = Check(Infer("digits"), "");
  EXPECT_TRUE(absl::IsUnauthenticated(missing));
  EXPECT_THAT(std::string(missing.message()), HasSubstr("Authorization: Bearer <key>"));
  EXPECT_TRUE(absl::IsUnauthenticated(Check(Infer("digits"), "Bearer not-a-key-at-all")));
  EXPECT_TRUE(absl::IsUnauthenticated(Check(Infer("digits"), "Basic b3BzOmtleQ==")));
  EXPECT_TRUE(absl::IsUnauthenticated(Check(kManage, "ops-key-0123456789")));  // no scheme
  EXPECT_TRUE(absl::IsUnauthenticated(Check(kManage, "Bearer " + std::string(10000, 'x'))));
}

TEST_F(AccessPolicyTest, RolesDecide) {
  EXPECT_TRUE(Check(kManage, "Bearer ops-key-0123456789").ok());
  EXPECT_TRUE(Check(kManage, "bearer   ops-key-0123456789  ").ok());
  EXPECT_EQ(grant_.key->name, "ops");
  EXPECT_TRUE(Check(kMonitor, "Bearer ops-key-0123456789").ok());
  EXPECT_TRUE(Check(kMonitor, "Bearer watch-key-0123456789").ok());
  absl::Status denied = Check(kManage, "Bearer watch-key-0123456789");
  EXPECT_TRUE(absl::IsPermissionDenied(denied));
  EXPECT_THAT(
      std::string(denied.message()),
      HasSubstr("'watcher' has the roles [monitoring]; this endpoint needs the management"));
  EXPECT_TRUE(absl::IsPermissionDenied(Check(Infer("digits"), "Bearer ops-key-0123456789")));
  EXPECT_TRUE(absl::IsPermissionDenied(Check(kManage, "Bearer alice-key-0123456789")));
}

TEST_F(AccessPolicyTest, TenantModelListAndDefaultPriority) {
  ASSERT_TRUE(Check(Infer("digits"), "Bearer alice-key-0123456789").ok());
  EXPECT_EQ(grant_.priority, 3);
  ASSERT_NE(grant_.permit, nullptr);
  grant_.permit->Finish(absl::StatusCode::kOk);
  absl::Status other = Check(Infer("resnet18"), "Bearer alice-key-0123456789");
  EXPECT_TRUE(absl::IsPermissionDenied(other));
  EXPECT_THAT(std::string(other.message()),
              HasSubstr("tenant 'alice' may not use model 'resnet18' (its models: digits)"));
  // A request that names no model could reach any: refused for a tenant with a list.
  EXPECT_TRUE(absl::IsPermissionDenied(Check(Infer(""), "Bearer alice-key-0123456789")));
  // Server metadata names no model and is for no model: allowed.
  EXPECT_TRUE(Check(RouteAccess::Of(Access::kInference), "Bearer alice-key-0123456789").ok());
}

TEST_F(AccessPolicyTest, TenantRateLimitGivesRetryAfterAndLeavesOthersAlone) {
  const std::string alice = "Bearer alice-key-0123456789";
  ASSERT_TRUE(Check(Infer("digits"), alice).ok());
  ASSERT_TRUE(Check(Infer("digits"), alice).ok());
  absl::Status limited = Check(Infer("digits"), alice);
  EXPECT_TRUE(absl::IsResourceExhausted(limited));
  EXPECT_EQ(denial_.retry_after_s, 1);
  EXPECT_TRUE(Check(Infer("resnet18"), "Bearer bob-key-0123456789").ok());
  time_.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(Check(Infer("digits"), alice).ok());
}

TEST_F(AccessPolicyTest, TenantInFlightCapHoldsUntilThePermitFinishes) {
  const std::string bob = "Bearer bob-key-0123456789";
  ASSERT_TRUE(Check(Infer("x"), bob).ok());
  std::shared_ptr<TenantPermit> held = grant_.permit;
  EXPECT_TRUE(absl::IsResourceExhausted(Check(Infer("x"), bob)));
  held->Finish(absl::StatusCode::kOk);
  EXPECT_TRUE(Check(Infer("x"), bob).ok());
}

TEST(AccessPolicyWithoutKeysTest, ManagementOffUnlessOpened) {
  KeyRing empty;
  AccessPolicy closed(AccessPolicyOptions{&empty, KeylessManagement::kOff, {}});
  EXPECT_TRUE(closed.enforcing());
  AccessGrant grant;
  AccessDenial denial;
  RouteAccess local_manage = kManage;
  local_manage.local_client = true;
  absl::Status refused = closed.Check(local_manage, "", &grant, &denial);
  EXPECT_TRUE(absl::IsPermissionDenied(refused));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("--allow-unauthenticated-management"));
  EXPECT_TRUE(closed.Check(Infer("m"), "", &grant, &denial).ok());
  EXPECT_TRUE(closed.Check(kMonitor, "", &grant, &denial).ok());

  AccessPolicy open(AccessPolicyOptions{nullptr, KeylessManagement::kAnyone, {}});
  EXPECT_FALSE(open.enforcing());
  EXPECT_TRUE(open.Check(kManage, "", &grant, &denial).ok());
}

// Regression (issue 30): on a loopback listener, a proxy on the same host relayed anyone's
// management requests.
TEST(AccessPolicyWithoutKeysTest, LoopbackManagementAnswersOnlyLocalClients) {
  AccessPolicy policy(AccessPolicyOptions{nullptr, KeylessManagement::kLocalClients, {}});
  EXPECT_TRUE(policy.enforcing());
  AccessGrant grant;
  AccessDenial denial;
  RouteAccess local_manage = kManage;
  local_manage.local_client = true;
  EXPECT_TRUE(policy.Check(local_manage, "", &grant, &denial).ok());
  absl::Status refused = policy.Check(kManage, "", &grant, &denial);
  EXPECT_TRUE(absl::IsPermissionDenied(refused));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("--trusted-proxies"));
  // Only management asks where the client is.
  EXPECT_TRUE(policy.Check(Infer("m"), "", &grant, &denial).ok());
  EXPECT_TRUE(policy.Check(kMonitor, "", &grant, &denial).ok());
}

TEST(BearerTokenTest, ReadsTheToken) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("  BEARER\tabc  "), "abc");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken("Bearer "), "");
  EXPECT_EQ(BearerToken("Bearerabc"), "");
  EXPECT_EQ(BearerToken("Token abc"), "");
}

}  // namespace
}  // namespace inferd
