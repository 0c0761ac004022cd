#include "core/types/tensor.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(TensorTest, ElementCountIsTheProductOfDimensions) {
  EXPECT_EQ(ElementCount(std::vector<int64_t>{2, 3, 4}).value(), 24);
  EXPECT_EQ(ElementCount(std::vector<int64_t>{}).value(), 1);  // a scalar
  EXPECT_EQ(ElementCount(std::vector<int64_t>{5, 0, 7}).value(), 0);
  EXPECT_EQ(ElementCount(std::vector<int64_t>{kMax}).value(), kMax);
  EXPECT_EQ(ElementCount(std::vector<int64_t>{0, kMax, kMax}).value(), 0);
}

TEST(TensorTest, ElementCountRejectsNegativeDimension) {
  absl::StatusOr<int64_t> count = ElementCount(std::vector<int64_t>{2, -1});
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(count.status().message()),
              HasSubstr("shape [2,-1] has a negative dimension"));
}

TEST(TensorTest, ElementCountRejectsOverflow) {
  absl::StatusOr<int64_t> count = ElementCount(std::vector<int64_t>{kMax, 2});
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(count.status().message()), HasSubstr("too many elements"));

  EXPECT_FALSE(ElementCount(std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32}).ok());
}

TEST(TensorTest, ShapeToStringPrintsBrackets) {
  EXPECT_EQ(ShapeToString(std::vector<int64_t>{2, 256}), "[2,256]");
  EXPECT_EQ(ShapeToString(std::vector<int64_t>{}), "[]");
  EXPECT_EQ(ShapeToString(std::vector<int64_t>{-1}), "[-1]");
}

TEST(TensorTest, AllocateSizesAndZeroFills) {
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(DataType::kFp32, {2, 3});
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->type(), DataType::kFp32);
  EXPECT_THAT(tensor->shape(), ElementsAre(2, 3));
  EXPECT_EQ(tensor->element_count(), 6);
  EXPECT_EQ(tensor->byte_size(), 24u);
  ASSERT_NE(tensor->data(), nullptr);
  for (size_t i = 0; i < tensor->byte_size(); ++i) {
    EXPECT_EQ(tensor->data()[i], std::byte{0}) << "byte " << i;
  }
  EXPECT_NE(tensor->owner(), nullptr);
}

TEST(TensorTest, AllocateUsesTheDatatypeSize) {
  EXPECT_EQ(Tensor::Allocate(DataType::kFp16, {5}).value().byte_size(), 10u);
  EXPECT_EQ(Tensor::Allocate(DataType::kInt64, {5}).value().byte_size(), 40u);
  EXPECT_EQ(Tensor::Allocate(DataType::kBool, {5}).value().byte_size(), 5u);
  EXPECT_EQ(Tensor::Allocate(DataType::kFp64, {}).value().byte_size(), 8u);
}

TEST(TensorTest, AllocateOfZeroElementsIsEmptyButValid) {
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(DataType::kFp32, {0, 4});
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->element_count(), 0);
  EXPECT_EQ(tensor->byte_size(), 0u);
}

TEST(TensorTest, AllocateRejectsNegativeDimension) {
  EXPECT_EQ(Tensor::Allocate(DataType::kFp32, {-1, 2}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The element count fits in int64, but count * 8 bytes wraps around size_t to 0: Allocate
// must refuse rather than return a tensor whose buffer is smaller than its element count.
TEST(TensorTest, AllocateRejectsByteSizeOverflow) {
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(DataType::kFp64, {int64_t{1} << 61});
  EXPECT_FALSE(tensor.ok()) << "element_count " << tensor->element_count() << ", byte_size "
                            << tensor->byte_size();
}

TEST(TensorTest, CopiesShareTheBytes) {
  Tensor a = Tensor::Allocate(DataType::kInt32, {3}).value();
  Tensor b = a;
  a.mutable_data_as<int32_t>()[1] = 42;
  EXPECT_EQ(b.data_as<int32_t>()[1], 42);
  EXPECT_EQ(a.data(), b.data());
}

TEST(TensorTest, WrapKeepsOwnerAliveAsLongAsAnyCopy) {
  bool released = false;
  auto* values = new float[4]{1, 2, 3, 4};
  std::shared_ptr<const void> owner(values, [&released](const void* p) {
    released = true;
    delete[] static_cast<const float*>(p);
  });

  Tensor copy;
  {
    Tensor tensor =
        Tensor::Wrap(DataType::kFp32, {2, 2}, values, 4 * sizeof(float), std::move(owner));
    EXPECT_EQ(tensor.element_count(), 4);
    EXPECT_EQ(tensor.byte_size(), 16u);
    EXPECT_EQ(tensor.data_as<float>(), values);  // a view, not a copy
    EXPECT_EQ(tensor.data_as<float>()[3], 4.0f);
    copy = tensor;
  }
  EXPECT_FALSE(released);
  EXPECT_EQ(copy.data_as<float>()[2], 3.0f);
  copy = Tensor();
  EXPECT_TRUE(released);
}

}  // namespace
}  // namespace inferd
