#include "auth/key_digest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd {
namespace {

using ::testing::HasSubstr;

TEST(KeyDigestTest, IsTheSha256OfTheKey) {
  // printf %s abc | sha256sum
  EXPECT_EQ(DigestHex(DigestOfKey("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(KeyDigestTest, EqualOnlyForTheSameKey) {
  EXPECT_TRUE(DigestsEqual(DigestOfKey("secret-key-0001"), DigestOfKey("secret-key-0001")));
  EXPECT_FALSE(DigestsEqual(DigestOfKey("secret-key-0001"), DigestOfKey("secret-key-0002")));
  // A prefix of a key is a different key (hashing fixes the compared length).
  EXPECT_FALSE(DigestsEqual(DigestOfKey("secret-key-000"), DigestOfKey("secret-key-0001")));
  EXPECT_FALSE(DigestsEqual(DigestOfKey(""), DigestOfKey("x")));
}

TEST(KeyDigestTest, DiffersInTheLastByteOnly) {
  KeyDigest a = DigestOfKey("k");
  KeyDigest b = a;
  b.back() ^= 1;
  EXPECT_FALSE(DigestsEqual(a, b));
  b.back() ^= 1;
  EXPECT_TRUE(DigestsEqual(a, b));
}

TEST(KeyDigestTest, ParsesHexInEitherCaseAndRoundTrips) {
  const KeyDigest digest = DigestOfKey("abc");
  absl::StatusOr<KeyDigest> lower = ParseDigestHex(DigestHex(digest));
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_TRUE(DigestsEqual(*lower, digest));
  absl::StatusOr<KeyDigest> upper =
      ParseDigestHex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_TRUE(DigestsEqual(*upper, digest));
}

TEST(KeyDigestTest, RefusesMalformedHex) {
  EXPECT_THAT(std::string(ParseDigestHex("abc").status().message()), HasSubstr("64 hex digits"));
  EXPECT_THAT(std::string(ParseDigestHex(std::string(64, 'g')).status().message()),
              HasSubstr("only hex digits"));
}

}  // namespace
}  // namespace inferd
