#include "auth/client_origin.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd {
namespace {

using ::testing::HasSubstr;

TrustedProxies Trust(std::string_view list) {
  absl::StatusOr<TrustedProxies> proxies = TrustedProxies::Parse(list);
  EXPECT_TRUE(proxies.ok()) << proxies.status();
  return proxies.ok() ? *proxies : TrustedProxies();
}

ForwardingHeaders Xff(std::string_view value) { return ForwardingHeaders{{}, value, {}}; }

TEST(ClientOriginTest, ALoopbackPeerWithoutForwardingHeadersIsLocal) {
  EXPECT_TRUE(IsLocalClient("127.0.0.1", {}, {}));
  EXPECT_TRUE(IsLocalClient("::1", {}, {}));
  EXPECT_TRUE(IsLocalClient("::ffff:127.0.0.1", {}, {}));
  EXPECT_FALSE(IsLocalClient("10.1.2.3", {}, {}));
  EXPECT_FALSE(IsLocalClient("", {}, {}));
  EXPECT_FALSE(IsLocalClient("not an address", {}, {}));
}

// Regression (issue 30): nginx on the same host connects from loopback and relays anyone.
TEST(ClientOriginTest, AnyForwardingHeaderFromAnUntrustedPeerIsRemote) {
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff("127.0.0.1"), {}));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", ForwardingHeaders{"for=127.0.0.1", {}, {}}, {}));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", ForwardingHeaders{{}, {}, "127.0.0.1"}, {}));
}

TEST(ClientOriginTest, ATrustedProxyNamesItsClientRightmostUntrusted) {
  const TrustedProxies trusted = Trust("127.0.0.1, 10.0.0.5");
  EXPECT_TRUE(IsLocalClient("127.0.0.1", Xff("127.0.0.1"), trusted));  // curl on the host
  EXPECT_TRUE(IsLocalClient("127.0.0.1", Xff("::1"), trusted));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff("203.0.113.7"), trusted));
  // A client cannot forge its way in: what it sent is left of what the proxy appended.
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff("127.0.0.1, 203.0.113.7"), trusted));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff("203.0.113.7, 127.0.0.1, 10.0.0.5"), trusted));
  EXPECT_TRUE(IsLocalClient("10.0.0.5", Xff("::1 ,10.0.0.5"), trusted));
  // Only X-Forwarded-For is read from a trusted proxy; garbage names no client.
  EXPECT_FALSE(IsLocalClient("127.0.0.1", ForwardingHeaders{"for=127.0.0.1", {}, {}}, trusted));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff("unknown"), trusted));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff("127.0.0.1:8080"), trusted));
  // A trusted proxy's own request (no forwarding header) is judged by its address.
  EXPECT_TRUE(IsLocalClient("127.0.0.1", {}, trusted));
  EXPECT_FALSE(IsLocalClient("10.0.0.5", {}, trusted));
}

TEST(ClientOriginTest, LongChainsAndHeadersAreNotWalked) {
  const TrustedProxies trusted = Trust("127.0.0.1");
  std::string chain = "127.0.0.2";
  for (size_t i = 0; i < kMaxForwardedHops; ++i) chain += ", 127.0.0.1";
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff(chain), trusted));
  EXPECT_FALSE(IsLocalClient("127.0.0.1", Xff(std::string(kMaxForwardingHeaderBytes, ' ') + "::1"),
                             trusted));
}

TEST(TrustedProxiesTest, ParsesAddressesAndRefusesTheRest) {
  EXPECT_TRUE(Trust("").empty());
  EXPECT_FALSE(Trust("127.0.0.1,::1").empty());
  absl::StatusOr<TrustedProxies> bad = TrustedProxies::Parse("127.0.0.1,proxy.local");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'proxy.local'"));
  std::string many;
  for (size_t i = 0; i <= kMaxTrustedProxies; ++i) many += "10.0.0." + std::to_string(i) + ",";
  EXPECT_FALSE(TrustedProxies::Parse(many).ok());
}

}  // namespace
}  // namespace inferd
