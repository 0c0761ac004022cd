#include "frontends/http/codecs/json_tensor_codec.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/float16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kNoLimit = 1 << 20;

class JsonTensorCodecTest : public ::testing::Test {
 protected:
  // Parses `json`; the element lives as long as the fixture (one document at a time).
  simdjson::dom::element Json(const std::string& json) {
    simdjson::dom::element element;
    const simdjson::error_code error = parser_.parse(json).get(element);
    EXPECT_FALSE(error) << simdjson::error_message(error) << " in " << json;
    return element;
  }

  absl::StatusOr<Tensor> Decode(const std::string& json, DataType type, Shape shape,
                                int64_t max_elements = kNoLimit) {
    return DecodeTensorData(Json(json), type, std::move(shape), "input 'x'", max_elements);
  }

  absl::StatusOr<Tensor> DecodeNested(const std::string& json, DataType type,
                                      int64_t max_elements = kNoLimit) {
    return DecodeNestedTensor(Json(json), type, "input 'x'", max_elements);
  }

  // The message of a failed decode, which must be InvalidArgument.
  static std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
    EXPECT_FALSE(result.ok());
    if (result.ok()) return "";
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(result.status().message());
  }

  template <typename T>
  static std::vector<T> Values(const Tensor& tensor) {
    std::vector<T> values(static_cast<size_t>(tensor.element_count()));
    std::memcpy(values.data(), tensor.data(), values.size() * sizeof(T));
    return values;
  }

 private:
  simdjson::dom::parser parser_;
};

std::string WriteFlat(const Tensor& tensor) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteFlatData(tensor, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string WriteNested(const Tensor& tensor, const Shape& shape, int64_t offset = 0) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteNestedData(tensor, shape, offset, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

template <typename T>
Tensor Make(DataType type, Shape shape, const std::vector<T>& values) {
  Tensor tensor = Tensor::Allocate(type, std::move(shape)).value();
  EXPECT_EQ(tensor.byte_size(), values.size() * sizeof(T));
  std::memcpy(tensor.mutable_data(), values.data(), tensor.byte_size());
  return tensor;
}

TEST_F(JsonTensorCodecTest, DecodesFlatFp32) {
  absl::StatusOr<Tensor> t = Decode("[1, 2.5, -3, 0.1]", DataType::kFp32, {2, 2});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->type(), DataType::kFp32);
  EXPECT_THAT(t->shape(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>(*t), ElementsAre(1.0f, 2.5f, -3.0f, 0.1f));
}

TEST_F(JsonTensorCodecTest, DecodesNestedDataInRowMajorOrder) {
  absl::StatusOr<Tensor> t = Decode("[[1, 2, 3], [4, 5, 6]]", DataType::kFp32, {3, 2});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<float>(*t), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST_F(JsonTensorCodecTest, DecodesInt64IncludingExtremes) {
  absl::StatusOr<Tensor> t =
      Decode("[[-9223372036854775808, 9223372036854775807], [0, -1]]", DataType::kInt64, {4});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<int64_t>(*t), ElementsAre(std::numeric_limits<int64_t>::min(),
                                               std::numeric_limits<int64_t>::max(), 0, -1));
}

TEST_F(JsonTensorCodecTest, DecodesBool) {
  absl::StatusOr<Tensor> t = Decode("[true, false, [true]]", DataType::kBool, {3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<uint8_t>(*t), ElementsAre(1, 0, 1));
}

TEST_F(JsonTensorCodecTest, DecodesUint8) {
  absl::StatusOr<Tensor> t = Decode("[0, 255, 7]", DataType::kUint8, {3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<uint8_t>(*t), ElementsAre(0, 255, 7));
}

TEST_F(JsonTensorCodecTest, DecodesUint64AboveInt64Range) {
  absl::StatusOr<Tensor> t = Decode("[18446744073709551615]", DataType::kUint64, {1});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<uint64_t>(*t), ElementsAre(std::numeric_limits<uint64_t>::max()));
}

TEST_F(JsonTensorCodecTest, DecodesFp16AndBf16) {
  absl::StatusOr<Tensor> half = Decode("[1, -2.5, 65504, 0.1]", DataType::kFp16, {4});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_THAT(Values<uint16_t>(*half), ElementsAre(0x3c00, 0xc100, 0x7bff, 0x2e66));
  absl::StatusOr<Tensor> bf16 = Decode("[1, -2.5]", DataType::kBf16, {2});
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_THAT(Values<uint16_t>(*bf16), ElementsAre(0x3f80, 0xc020));
}

TEST_F(JsonTensorCodecTest, DecodesScalarFromBareNumber) {
  absl::StatusOr<Tensor> t = Decode("3.5", DataType::kFp64, {});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(Values<double>(*t), ElementsAre(3.5));
}

TEST_F(JsonTensorCodecTest, RejectsIntegersOutOfRange) {
  EXPECT_THAT(ErrorOf(Decode("[1, 300]", DataType::kUint8, {2})),
              AllOf(HasSubstr("input 'x'"), HasSubstr("element 1 is 300"), HasSubstr("UINT8"),
                    HasSubstr("in range")));
  EXPECT_THAT(ErrorOf(Decode("[-1]", DataType::kUint32, {1})),
              AllOf(HasSubstr("element 0 is -1"), HasSubstr("UINT32")));
  EXPECT_THAT(ErrorOf(Decode("[128]", DataType::kInt8, {1})), HasSubstr("INT8"));
  EXPECT_THAT(ErrorOf(Decode("[-129]", DataType::kInt8, {1})), HasSubstr("INT8"));
  EXPECT_THAT(ErrorOf(Decode("[9223372036854775808]", DataType::kInt64, {1})), HasSubstr("INT64"));
}

TEST_F(JsonTensorCodecTest, RejectsFloatsBeyondTheDatatypesRange) {
  EXPECT_THAT(ErrorOf(Decode("[1, 1e300]", DataType::kFp32, {2})),
              AllOf(HasSubstr("element 1"), HasSubstr("3.4028235e38")));
  EXPECT_THAT(ErrorOf(Decode("[-70000]", DataType::kFp16, {1})), HasSubstr("65504"));
  EXPECT_THAT(ErrorOf(Decode("[1e39]", DataType::kBf16, {1})), HasSubstr("magnitude"));
  // FP64 takes every double; the largest FP32 and FP16 values themselves are accepted.
  EXPECT_TRUE(Decode("[1e300]", DataType::kFp64, {1}).ok());
  EXPECT_TRUE(Decode("[3.4028234663852886e38]", DataType::kFp32, {1}).ok());
  EXPECT_TRUE(Decode("[65504]", DataType::kFp16, {1}).ok());
}

TEST_F(JsonTensorCodecTest, RejectsFractionForIntegerType) {
  EXPECT_THAT(ErrorOf(Decode("[1, 1.5]", DataType::kInt64, {2})),
              AllOf(HasSubstr("element 1 is 1.5"), HasSubstr("INT64 data must be integers")));
}

TEST_F(JsonTensorCodecTest, RejectsStringElementNamingItsIndex) {
  EXPECT_THAT(ErrorOf(Decode(R"([1, 2, "three"])", DataType::kFp32, {3})),
              AllOf(HasSubstr("input 'x': element 2 is \"three\""),
                    HasSubstr("FP32 data must be numbers")));
}

TEST_F(JsonTensorCodecTest, RejectsNumberForBool) {
  EXPECT_THAT(ErrorOf(Decode("[1]", DataType::kBool, {1})), HasSubstr("true or false"));
}

TEST_F(JsonTensorCodecTest, RejectsElementCountMismatch) {
  EXPECT_THAT(ErrorOf(Decode("[1, 2, 3]", DataType::kFp32, {2, 2})),
              HasSubstr("input 'x': shape [2,2] needs 4 elements, but data has 3"));
  EXPECT_THAT(ErrorOf(Decode("[1, 2, 3, 4, 5]", DataType::kFp32, {2, 2})),
              HasSubstr("shape [2,2] needs 4 elements, but data has 5"));
}

TEST_F(JsonTensorCodecTest, RefusesShapeLargerThanMaxElementsBeforeAllocating) {
  EXPECT_THAT(ErrorOf(Decode("[1, 2]", DataType::kFp32, {1000000, 1000000}, /*max_elements=*/10)),
              HasSubstr("shape [1000000,1000000] needs 1000000000000 elements, but data has 2"));
  EXPECT_TRUE(Decode("[1, 2]", DataType::kFp32, {2}, /*max_elements=*/2).ok());
}

TEST_F(JsonTensorCodecTest, RejectsInvalidShape) {
  EXPECT_FALSE(Decode("[1]", DataType::kFp32, {-1}).ok());
}

TEST_F(JsonTensorCodecTest, DecodeNestedInfersShape) {
  absl::StatusOr<Tensor> t = DecodeNested("[[1, 2, 3], [4, 5, 6]]", DataType::kInt32);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->shape(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int32_t>(*t), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST_F(JsonTensorCodecTest, DecodeNestedOfScalarHasEmptyShape) {
  absl::StatusOr<Tensor> t = DecodeNested("7", DataType::kFp32);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->shape(), IsEmpty());
  EXPECT_THAT(Values<float>(*t), ElementsAre(7.0f));
}

TEST_F(JsonTensorCodecTest, DecodeNestedOfEmptyListHasShapeZero) {
  absl::StatusOr<Tensor> t = DecodeNested("[]", DataType::kFp32);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->shape(), ElementsAre(0));
}

TEST_F(JsonTensorCodecTest, DecodeNestedRejectsRaggedLists) {
  EXPECT_THAT(ErrorOf(DecodeNested("[[1, 2], [3]]", DataType::kFp32)),
              AllOf(HasSubstr("input 'x'"), HasSubstr("ragged")));
  EXPECT_THAT(ErrorOf(DecodeNested("[[1, 2], 3]", DataType::kFp32)), HasSubstr("ragged"));
  EXPECT_THAT(ErrorOf(DecodeNested("[1, [2, 3]]", DataType::kFp32)), HasSubstr("ragged"));
  EXPECT_THAT(ErrorOf(DecodeNested("[[[1], [2]], [[3], [4, 5]]]", DataType::kFp32)),
              HasSubstr("ragged"));
}

TEST_F(JsonTensorCodecTest, DecodeNestedAppliesMaxElements) {
  EXPECT_THAT(ErrorOf(DecodeNested("[1, 2, 3]", DataType::kFp32, /*max_elements=*/2)),
              HasSubstr("needs 3 elements"));
}

TEST(JsonTensorWriteTest, WritesFp32Shortest) {
  EXPECT_EQ(WriteFlat(Make<float>(DataType::kFp32, {4}, {0.1f, 1.0f, -2.5f, 1e-7f})),
            "[0.1,1,-2.5,1e-07]");
}

TEST(JsonTensorWriteTest, WritesNonFiniteFloats) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(WriteFlat(Make<float>(DataType::kFp32, {3}, {nan, inf, -inf})),
            "[NaN,Infinity,-Infinity]");
}

TEST(JsonTensorWriteTest, WritesFp64Shortest) {
  EXPECT_EQ(WriteFlat(Make<double>(DataType::kFp64, {2}, {0.1, 123456789.125})),
            "[0.1,123456789.125]");
}

TEST(JsonTensorWriteTest, WritesHalvesAsTheirFloatValues) {
  EXPECT_EQ(WriteFlat(Make<uint16_t>(DataType::kFp16, {3}, {0x3c00, 0xc100, 0x7bff})),
            "[1,-2.5,65504]");
  EXPECT_EQ(WriteFlat(Make<uint16_t>(DataType::kBf16, {2}, {0x3f80, 0xc020})), "[1,-2.5]");
}

TEST(JsonTensorWriteTest, WritesBoolAsTrueFalse) {
  EXPECT_EQ(WriteFlat(Make<uint8_t>(DataType::kBool, {3}, {1, 0, 1})), "[true,false,true]");
}

TEST(JsonTensorWriteTest, WritesIntegersWithSigns) {
  EXPECT_EQ(
      WriteFlat(Make<int64_t>(DataType::kInt64, {3}, {-5, 0, std::numeric_limits<int64_t>::min()})),
      "[-5,0,-9223372036854775808]");
  EXPECT_EQ(WriteFlat(Make<int8_t>(DataType::kInt8, {2}, {-128, 127})), "[-128,127]");
  EXPECT_EQ(WriteFlat(Make<uint8_t>(DataType::kUint8, {2}, {255, 0})), "[255,0]");
  EXPECT_EQ(
      WriteFlat(Make<uint64_t>(DataType::kUint64, {1}, {std::numeric_limits<uint64_t>::max()})),
      "[18446744073709551615]");
}

TEST(JsonTensorWriteTest, WritesEmptyTensorAsEmptyArray) {
  EXPECT_EQ(WriteFlat(Tensor::Allocate(DataType::kFp32, {0}).value()), "[]");
}

TEST(JsonTensorWriteTest, WritesNestedToShape) {
  const Tensor t = Make<int32_t>(DataType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(WriteNested(t, {2, 3}), "[[1,2,3],[4,5,6]]");
  EXPECT_EQ(WriteNested(t, {3, 2}), "[[1,2],[3,4],[5,6]]");
  EXPECT_EQ(WriteNested(t, {6}), "[1,2,3,4,5,6]");
  EXPECT_EQ(WriteNested(t, {3}, /*offset=*/3), "[4,5,6]");
  EXPECT_EQ(WriteNested(t, {}, /*offset=*/4), "5");
}

TEST(JsonTensorWriteTest, WritesNestedWithZeroSizedInnerDimension) {
  EXPECT_EQ(WriteNested(Tensor::Allocate(DataType::kFp32, {2, 0}).value(), {2, 0}), "[[],[]]");
}

}  // namespace
}  // namespace inferd
