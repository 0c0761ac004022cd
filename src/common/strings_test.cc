#include "common/strings.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(StringsTest, StrCatMixesStringKindsAndIntegers) {
  const std::string owned = "own";
  const std::string_view std_view = "std";
  const absl::string_view absl_view = "absl";
  EXPECT_EQ(StrCat(owned, "/", std_view, "/", absl_view, "/", 42, "/", int64_t{-7}, "/",
                   std::numeric_limits<uint64_t>::max(), "/", size_t{0}),
            "own/std/absl/42/-7/18446744073709551615/0");
}

TEST(StringsTest, StrCatOfNothingIsEmpty) { EXPECT_EQ(StrCat(), ""); }

TEST(StringsTest, StrCatPrintsSmallIntegersAsNumbers) {
  EXPECT_EQ(StrCat(int8_t{-5}, ",", uint8_t{200}, ",", short{3}), "-5,200,3");
}

TEST(StringsTest, StrAppendAppends) {
  std::string text = "a";
  StrAppend(&text, std::string_view("b"), absl::string_view("c"), 1);
  EXPECT_EQ(text, "abc1");
}

TEST(StringsTest, StrJoinJoinsStringsAndNumbers) {
  EXPECT_EQ(StrJoin(std::vector<std::string_view>{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(StrJoin(std::vector<int64_t>{2, -1, 256}, ","), "2,-1,256");
  EXPECT_EQ(StrJoin(std::set<std::string>{"y", "x"}, "|"), "x|y");
  EXPECT_EQ(StrJoin(std::vector<std::string>{"only"}, ", "), "only");
  EXPECT_EQ(StrJoin(std::vector<std::string>{}, ", "), "");
}

TEST(StringsTest, SplitSkipEmptyDropsEmptyPieces) {
  EXPECT_THAT(SplitSkipEmpty("/v2//models/", '/'), ElementsAre("v2", "models"));
  EXPECT_THAT(SplitSkipEmpty("a/b/c", '/'), ElementsAre("a", "b", "c"));
  EXPECT_THAT(SplitSkipEmpty("single", '/'), ElementsAre("single"));
  EXPECT_THAT(SplitSkipEmpty("", '/'), IsEmpty());
  EXPECT_THAT(SplitSkipEmpty("///", '/'), IsEmpty());
  EXPECT_THAT(SplitSkipEmpty("m:predict", ':'), ElementsAre("m", "predict"));
}

TEST(StringsTest, EscapeForLogKeepsPrintableTextAndEscapesTheRest) {
  EXPECT_EQ(EscapeForLog("resnet18-v2_x"), "resnet18-v2_x");
  EXPECT_EQ(EscapeForLog("a\nFAKE LOG LINE"), "a\\x0aFAKE LOG LINE");
  EXPECT_EQ(EscapeForLog("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(EscapeForLog("q\"b\\"), "q\\\"b\\\\");
  EXPECT_EQ(EscapeForLog("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EscapeForLog(std::string(1000, 'a'), 10), "aaaaaaaaaa...");
}

}  // namespace
}  // namespace inferd
