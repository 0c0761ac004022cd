#include "backends/llama/text_assembler.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(TextAssemblerTest, PassesPlainTextThrough) {
  TextAssembler text;
  EXPECT_EQ(text.Add("Hello"), "Hello");
  EXPECT_EQ(text.Add(", world"), ", world");
  EXPECT_EQ(text.Flush(), "");
  EXPECT_EQ(text.text(), "Hello, world");
}

TEST(TextAssemblerTest, HoldsBackAnUnfinishedUtf8Character) {
  TextAssembler text;
  // "é" is C3 A9; the piece ends after its first byte.
  EXPECT_EQ(text.Add("caf\xC3"), "caf");
  EXPECT_EQ(text.Add("\xA9!"), "\xC3\xA9!");
}

TEST(TextAssemblerTest, FlushReplacesAnUnfinishedCharacter) {
  TextAssembler text;
  EXPECT_EQ(text.Add("x\xE2\x82"), "x");
  EXPECT_EQ(text.Flush(), "\xEF\xBF\xBD");
}

TEST(TextAssemblerTest, CutsAtAStopStringAcrossPieces) {
  TextAssembler text({"\nUser:"});
  EXPECT_EQ(text.Add("Sure.\nUs"), "Sure.");
  EXPECT_FALSE(text.stopped());
  EXPECT_EQ(text.Add("er: hi"), "");
  EXPECT_TRUE(text.stopped());
  EXPECT_EQ(text.stopped_by(), "\nUser:");
  EXPECT_EQ(text.text(), "Sure.");
  EXPECT_EQ(text.Add("more"), "");
}

TEST(TextAssemblerTest, ReleasesHeldTextThatDidNotBecomeAStop) {
  TextAssembler text({"STOP"});
  EXPECT_EQ(text.Add("a ST"), "a ");
  EXPECT_EQ(text.Add("ART"), "START");
  EXPECT_EQ(text.Add(" ST"), " ");
  EXPECT_EQ(text.Flush(), "ST");
}

TEST(TextAssemblerTest, StopsAtTheEarliestOfSeveralStops) {
  TextAssembler text({"bb", "a"});
  EXPECT_EQ(text.Add("xxbbya"), "xx");
  EXPECT_TRUE(text.stopped());
  // The one that ended the text, for Anthropic's stop_sequence.
  EXPECT_EQ(text.stopped_by(), "bb");
}

TEST(CompleteUtf8PrefixTest, FindsCharacterBoundaries) {
  EXPECT_EQ(CompleteUtf8Prefix(""), 0u);
  EXPECT_EQ(CompleteUtf8Prefix("abc"), 3u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xF0\x9F\x98"), 1u);      // 4-byte emoji, 3 bytes present
  EXPECT_EQ(CompleteUtf8Prefix("a\xF0\x9F\x98\x80"), 5u);  // complete
  EXPECT_EQ(CompleteUtf8Prefix("\xFF"), 1u);               // invalid: passed through
}

}  // namespace
}  // namespace inferd
