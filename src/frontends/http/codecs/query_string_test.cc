#include "frontends/http/codecs/query_string.h"

#include <optional>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::Optional;

TEST(QueryStringTest, FindsEachParameter) {
  EXPECT_THAT(QueryParameter("model=m&x=1", "model"), Optional(std::string_view("m")));
  EXPECT_THAT(QueryParameter("model=m&x=1", "x"), Optional(std::string_view("1")));
}

TEST(QueryStringTest, AbsentParameterIsNullopt) {
  EXPECT_EQ(QueryParameter("model=m&x=1", "y"), std::nullopt);
  EXPECT_EQ(QueryParameter("", "model"), std::nullopt);
}

TEST(QueryStringTest, MatchesWholeKeysOnly) {
  EXPECT_EQ(QueryParameter("amodel=m", "model"), std::nullopt);
  EXPECT_EQ(QueryParameter("model_name=m", "model"), std::nullopt);
  EXPECT_EQ(QueryParameter("mode=m", "model"), std::nullopt);
}

TEST(QueryStringTest, KeyWithoutValueIsEmpty) {
  EXPECT_THAT(QueryParameter("verbose&model=m", "verbose"), Optional(std::string_view("")));
  EXPECT_THAT(QueryParameter("model=", "model"), Optional(std::string_view("")));
}

TEST(QueryStringTest, FirstOccurrenceWins) {
  EXPECT_THAT(QueryParameter("model=a&model=b", "model"), Optional(std::string_view("a")));
}

TEST(QueryStringTest, ValueKeepsLaterEqualsSignsAndIsNotDecoded) {
  EXPECT_THAT(QueryParameter("model=a=b", "model"), Optional(std::string_view("a=b")));
  EXPECT_THAT(QueryParameter("model=my%20model", "model"),
              Optional(std::string_view("my%20model")));
}

TEST(QueryStringTest, SkipsEmptyPairs) {
  EXPECT_THAT(QueryParameter("&&model=m&", "model"), Optional(std::string_view("m")));
}

}  // namespace
}  // namespace inferd
