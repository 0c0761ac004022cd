#include "common/json_body.h"

#include <string>

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(JsonBodyTest, ParsesAnObject) {
  std::string body = R"({"a": [1, 2]})";
  absl::StatusOr<ParsedJson> json = ParseJsonBody(body);
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::array a;
  ASSERT_FALSE(json->root()["a"].get(a));
  EXPECT_EQ(a.size(), 2u);
}

TEST(JsonBodyTest, RefusesNestingDeeperThanTheLimitWithAReason) {
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJsonBody(ok).ok());
  std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  absl::StatusOr<ParsedJson> json = ParseJsonBody(deep);
  ASSERT_FALSE(json.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(json.status()));
  EXPECT_NE(json.status().message().find("deeper than 64 levels"), std::string::npos)
      << json.status();
}

TEST(JsonBodyTest, MillionsOfOpenBracketsAreRefusedNotACrash) {
  std::string body(4'000'000, '[');
  absl::StatusOr<ParsedJson> json = ParseJsonBody(body);
  ASSERT_FALSE(json.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(json.status())) << json.status();
}

TEST(JsonBodyTest, RefusesABodyOverTheSizeLimitNamingTheBinaryExtension) {
  std::string body = R"({"inputs": []})";
  absl::StatusOr<ParsedJson> json = ParseJsonBody(body, /*max_bytes=*/8);
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("binary tensor extension"), std::string::npos)
      << json.status();
}

TEST(JsonBodyTest, ALargeBodyHasItsOwnParserAndTheReusedOneStaysValid) {
  std::string small = R"({"small": 1})";
  absl::StatusOr<ParsedJson> first = ParseJsonBody(small);
  ASSERT_TRUE(first.ok());
  std::string large = "[" + std::string(kReusedParserBytes, ' ') + "2]";
  absl::StatusOr<ParsedJson> second = ParseJsonBody(large);
  ASSERT_TRUE(second.ok()) << second.status();
  int64_t value = 0;
  ASSERT_FALSE(first->root()["small"].get(value));
  EXPECT_EQ(value, 1);
}

TEST(JsonBodyTest, EmptyAndMalformedBodiesSayWhatIsWrong) {
  std::string empty;
  EXPECT_NE(ParseJsonBody(empty).status().message().find("empty"), std::string::npos);
  std::string bad = "{\"a\": ";
  EXPECT_NE(ParseJsonBody(bad).status().message().find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace inferd
