#include "core/types/data_type.h"

#include <string>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::Optional;

constexpr DataType kAll[] = {
    DataType::kBool, DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64,
    DataType::kInt8, DataType::kInt16, DataType::kInt32,  DataType::kInt64,  DataType::kFp16,
    DataType::kBf16, DataType::kFp32,  DataType::kFp64,   DataType::kBytes};

TEST(DataTypeTest, NamesRoundTrip) {
  for (DataType type : kAll) {
    EXPECT_THAT(ParseDataType(DataTypeName(type)), Optional(type)) << DataTypeName(type);
  }
  EXPECT_EQ(DataTypeName(DataType::kFp32), "FP32");
  EXPECT_EQ(DataTypeName(DataType::kBf16), "BF16");
}

TEST(DataTypeTest, RejectsNamesThatAreNotDatatypes) {
  EXPECT_EQ(ParseDataType("fp32"), std::nullopt);
  EXPECT_EQ(ParseDataType("FP33"), std::nullopt);
  EXPECT_EQ(ParseDataType("bytes"), std::nullopt);
  EXPECT_EQ(ParseDataType(""), std::nullopt);
}

TEST(DataTypeTest, Sizes) {
  EXPECT_EQ(DataTypeSize(DataType::kBool), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kUint8), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kInt16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kUint32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kInt64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kFp16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kBf16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kFp32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kFp64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kBytes), 0u);  // variable
}

TEST(DataTypeTest, BytesIsNeitherIntegerNorFloat) {
  EXPECT_FALSE(IsIntegerType(DataType::kBytes));
  EXPECT_FALSE(IsFloatType(DataType::kBytes));
}

TEST(DataTypeTest, Categories) {
  EXPECT_FALSE(IsIntegerType(DataType::kBool));
  EXPECT_FALSE(IsFloatType(DataType::kBool));
  for (DataType type : {DataType::kUint8, DataType::kUint64, DataType::kInt8, DataType::kInt64}) {
    EXPECT_TRUE(IsIntegerType(type)) << DataTypeName(type);
    EXPECT_FALSE(IsFloatType(type)) << DataTypeName(type);
  }
  for (DataType type : {DataType::kFp16, DataType::kBf16, DataType::kFp32, DataType::kFp64}) {
    EXPECT_TRUE(IsFloatType(type)) << DataTypeName(type);
    EXPECT_FALSE(IsIntegerType(type)) << DataTypeName(type);
  }
}

TEST(DataTypeTest, AllDataTypeNamesListsEveryTypeOnce) {
  const std::string_view all = AllDataTypeNames();
  std::vector<std::string> names = absl::StrSplit(absl::string_view(all.data(), all.size()), ", ");
  ASSERT_EQ(names.size(), std::size(kAll));
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], DataTypeName(kAll[i]));
}

}  // namespace
}  // namespace inferd
