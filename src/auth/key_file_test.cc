#include "auth/key_file.h"

#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/fake_time_source.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class KeyFileTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<KeyRing>> Parse(const std::string& yaml) {
    return ParseKeyFile(yaml, "keys.yaml", &time_, [this](const char* name) -> const char* {
      auto found = env_.find(name);
      return found == env_.end() ? nullptr : found->second.c_str();
    });
  }
  std::string ErrorOf(const std::string& yaml) {
    absl::StatusOr<std::unique_ptr<KeyRing>> ring = Parse(yaml);
    EXPECT_FALSE(ring.ok());
    return ring.ok() ? "" : std::string(ring.status().message());
  }

  FakeTimeSource time_;
  std::map<std::string, std::string> env_;
};

TEST_F(KeyFileTest, ReadsKeysFromEachSourceWithRolesAndTenants) {
  env_["OPS_KEY"] = "ops-key-from-the-environment";
  absl::StatusOr<std::unique_ptr<KeyRing>> ring = Parse(R"(
keys:
  - name: ops
    key_env: OPS_KEY
    roles: [management, inference]
  - name: alice-app
    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    roles: [inference]
    tenant: alice
  - name: bob-app
    key: "bob-has-a-long-key-here"
    roles: [inference, monitoring]
    tenant: bob
tenants:
  alice: {requests_per_second: 20, burst: 40, max_in_flight: 4, priority: 2, models: [mlp_scorer]}
  bob:
)");
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_EQ((*ring)->size(), 3u);

  const ApiKey* ops = (*ring)->Find("ops-key-from-the-environment");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->name, "ops");
  EXPECT_TRUE(ops->roles.Allows(Access::kManagement));
  EXPECT_TRUE(ops->roles.Allows(Access::kMonitoring));  // management implies it
  EXPECT_EQ(ops->tenant, nullptr);

  const ApiKey* alice = (*ring)->Find("abc");  // the sha256 above is that of "abc"
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(alice->name, "alice-app");
  EXPECT_FALSE(alice->roles.Allows(Access::kManagement));
  EXPECT_FALSE(alice->roles.Allows(Access::kMonitoring));
  ASSERT_NE(alice->tenant, nullptr);
  const TenantLimits& limits = alice->tenant->limits();
  EXPECT_EQ(limits.name, "alice");
  EXPECT_EQ(limits.requests_per_second, 20);
  EXPECT_EQ(limits.burst, 40);
  EXPECT_EQ(limits.max_in_flight, 4);
  EXPECT_EQ(limits.priority, 2);
  EXPECT_THAT(limits.models, ElementsAre("mlp_scorer"));

  const ApiKey* bob = (*ring)->Find("bob-has-a-long-key-here");
  ASSERT_NE(bob, nullptr);
  ASSERT_NE(bob->tenant, nullptr);
  EXPECT_EQ(bob->tenant->limits().max_in_flight, 0);
  EXPECT_TRUE(bob->roles.Allows(Access::kMonitoring));

  EXPECT_EQ((*ring)->Find("bob-has-a-long-key-her"), nullptr);
  EXPECT_EQ((*ring)->Find(""), nullptr);
}

TEST_F(KeyFileTest, RefusesShortKeysAndUnsetVariables) {
  EXPECT_THAT(ErrorOf("keys: [{name: a, key: short, roles: [inference]}]"),
              HasSubstr("shorter than 16 characters"));
  EXPECT_THAT(ErrorOf("keys: [{name: a, key_env: NOPE, roles: [inference]}]"),
              HasSubstr("environment variable NOPE is not set"));
}

TEST_F(KeyFileTest, NeedsExactlyOneKeySource) {
  EXPECT_THAT(ErrorOf("keys: [{name: a, roles: [inference]}]"),
              HasSubstr("exactly one of key, sha256, key_env"));
  EXPECT_THAT(ErrorOf("keys: [{name: a, key: 0123456789abcdef, sha256: " + std::string(64, 'a') +
                      ", roles: [inference]}]"),
              HasSubstr("exactly one of key, sha256, key_env"));
}

TEST_F(KeyFileTest, RefusesUnknownFieldsRolesAndTenants) {
  EXPECT_THAT(ErrorOf("keys: [{name: a, key: 0123456789abcdef, roles: [inference], rol: x}]"),
              HasSubstr("unknown field 'rol'"));
  EXPECT_THAT(ErrorOf("keys: [{name: a, key: 0123456789abcdef, roles: [admin]}]"),
              HasSubstr("unknown role 'admin'"));
  EXPECT_THAT(ErrorOf("keys: [{name: a, key: 0123456789abcdef, roles: []}]"),
              HasSubstr("needs a list of roles"));
  EXPECT_THAT(
      ErrorOf("keys: [{name: a, key: 0123456789abcdef, roles: [inference], tenant: ghost}]"),
      HasSubstr("tenant 'ghost' is not defined"));
  EXPECT_THAT(ErrorOf("keys: [{name: a, key: 0123456789abcdef, roles: [inference]}]\n"
                      "tenants: {t: {max_inflight: 3}}"),
              HasSubstr("unknown field 'max_inflight'"));
}

TEST_F(KeyFileTest, RefusesOutOfRangeLimits) {
  const std::string key = "keys: [{name: a, key: 0123456789abcdef, roles: [inference]}]\n";
  EXPECT_THAT(ErrorOf(key + "tenants: {t: {requests_per_second: -1}}"),
              HasSubstr("tenants.t.requests_per_second: must be a number"));
  EXPECT_THAT(ErrorOf(key + "tenants: {t: {requests_per_second: .nan}}"),
              HasSubstr("must be a number"));
  EXPECT_THAT(ErrorOf(key + "tenants: {t: {max_in_flight: 0}}"),
              HasSubstr("max_in_flight: must be an integer from 1"));
  EXPECT_THAT(ErrorOf(key + "tenants: {t: {max_in_flight: 99999999999999999999}}"),
              HasSubstr("must be an integer"));
  EXPECT_THAT(ErrorOf(key + "tenants: {t: {burst: 3}}"),
              HasSubstr("burst: needs requests_per_second"));
  EXPECT_THAT(ErrorOf(key + "tenants: {t: {models: []}}"), HasSubstr("non-empty list"));
}

TEST_F(KeyFileTest, RefusesDuplicateNamesAndKeys) {
  EXPECT_THAT(ErrorOf("keys:\n"
                      "  - {name: a, key: 0123456789abcdef, roles: [inference]}\n"
                      "  - {name: a, key: 0123456789abcdeX, roles: [inference]}\n"),
              HasSubstr("two keys are named 'a'"));
  EXPECT_THAT(ErrorOf("keys:\n"
                      "  - {name: a, key: 0123456789abcdef, roles: [inference]}\n"
                      "  - {name: b, key: 0123456789abcdef, roles: [management]}\n"),
              HasSubstr("'a' and 'b' are the same key"));
}

TEST_F(KeyFileTest, ParseErrorsNeverQuoteTheFile) {
  const std::string message = ErrorOf("keys: [{name: a, key: \"super-secret-value\", roles: [");
  EXPECT_THAT(message, HasSubstr("not valid YAML"));
  EXPECT_THAT(message, Not(HasSubstr("super-secret-value")));
  EXPECT_THAT(ErrorOf(""), HasSubstr("must be a mapping"));
  EXPECT_THAT(ErrorOf("keys: []"), HasSubstr("non-empty list of keys"));
}

TEST_F(KeyFileTest, LoadsAFileAndSaysWhenItIsMissing) {
  absl::StatusOr<std::unique_ptr<KeyRing>> missing =
      LoadKeyFile("/nonexistent/keys.yaml", &time_, [](const char*) { return nullptr; });
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/keys.yaml"));
}

}  // namespace
}  // namespace inferd
