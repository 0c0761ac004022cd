#include "core/types/bytes_tensor.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

TEST(BytesTensorTest, MakesAndReadsBackElements) {
  const std::vector<std::string_view> elements = {"ab", "", std::string_view("\0x", 2)};
  absl::StatusOr<Tensor> tensor = MakeBytesTensor({3}, elements);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->type(), DataType::kBytes);
  EXPECT_EQ(tensor->element_count(), 3);
  EXPECT_EQ(tensor->byte_size(), 4u + 2 + 4 + 4 + 2);
  EXPECT_THAT(BytesElements(*tensor), ElementsAre("ab", "", std::string_view("\0x", 2)));
}

TEST(BytesTensorTest, SerializesLengthsLittleEndian) {
  std::string out;
  AppendBytesElement(std::string(258, 'z'), out);
  ASSERT_EQ(out.size(), 262u);
  EXPECT_EQ(out.substr(0, 4), std::string("\x02\x01\x00\x00", 4));
}

TEST(BytesTensorTest, RefusesElementCountNotMatchingShape) {
  const std::vector<std::string_view> elements = {"a"};
  EXPECT_THAT(MakeBytesTensor({2}, elements).status().message(),
              HasSubstr("needs 2 BYTES elements, got 1"));
}

TEST(BytesTensorTest, ValidatesWellFormedBuffer) {
  std::string buffer;
  AppendBytesElement("hi", buffer);
  AppendBytesElement("", buffer);
  EXPECT_TRUE(ValidateBytesBuffer(AsBytes(buffer), 2, "input 't'").ok());
}

TEST(BytesTensorTest, RejectsTruncatedLength) {
  std::string buffer;
  AppendBytesElement("hi", buffer);
  buffer += std::string("\x01\x00", 2);
  EXPECT_THAT(ValidateBytesBuffer(AsBytes(buffer), 2, "input 't'").message(),
              HasSubstr("input 't': BYTES element 1 of 2 is truncated"));
}

TEST(BytesTensorTest, RejectsLengthRunningPastTheEnd) {
  std::string buffer(
      "\x05\x00\x00\x00"
      "abc",
      7);
  EXPECT_THAT(ValidateBytesBuffer(AsBytes(buffer), 1, "input 't'").message(),
              HasSubstr("claims 5 bytes but only 3 remain"));
}

TEST(BytesTensorTest, RejectsBytesLeftOver) {
  std::string buffer;
  AppendBytesElement("hi", buffer);
  buffer += "extra";
  EXPECT_THAT(ValidateBytesBuffer(AsBytes(buffer), 1, "input 't'").message(),
              HasSubstr("5 bytes are left over after the 1 BYTES elements"));
}

TEST(BytesTensorTest, AllocatedBytesTensorHoldsEmptyStrings) {
  // What a warm-up run at load feeds a BYTES input.
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(DataType::kBytes, {2, 1});
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->byte_size(), 8u);
  EXPECT_TRUE(ValidateBytesBuffer({tensor->data(), tensor->byte_size()}, 2, "t").ok());
  EXPECT_THAT(BytesElements(*tensor), ElementsAre("", ""));
}

}  // namespace
}  // namespace inferd
