#include "core/scheduling/batch_assembly.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// A tensor of `rows` x `columns` floats, counting up from `first`.
Tensor Counting(int64_t rows, int64_t columns, float first) {
  Tensor tensor = Tensor::Allocate(DataType::kFp32, {rows, columns}).value();
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    tensor.mutable_data_as<float>()[i] = first + static_cast<float>(i);
  }
  return tensor;
}

std::vector<float> Floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data_as<float>(),
                            tensor.data_as<float>() + tensor.element_count());
}

// A request with inputs "a" ([rows, 2] counting from `first`) and "b" ([rows, 1] of `first`).
PendingRequest Pending(int64_t rows, float first) {
  PendingRequest pending;
  pending.request = std::make_unique<InferRequest>();
  pending.request->inputs.push_back({"a", Counting(rows, 2, first)});
  Tensor b = Tensor::Allocate(DataType::kFp32, {rows, 1}).value();
  for (int64_t i = 0; i < rows; ++i) b.mutable_data_as<float>()[i] = first;
  pending.request->inputs.push_back({"b", std::move(b)});
  pending.rows = rows;
  return pending;
}

TEST(BatchAssemblyTest, GatherOfOneRequestUsesItsTensorsWithoutCopying) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(3, 0));

  absl::StatusOr<std::vector<Tensor>> inputs = GatherInputs(batch);

  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_THAT(*inputs, SizeIs(2));
  EXPECT_EQ((*inputs)[0].data(), batch[0].request->inputs[0].tensor.data());
  EXPECT_EQ((*inputs)[1].data(), batch[0].request->inputs[1].tensor.data());
  EXPECT_THAT((*inputs)[0].shape(), ElementsAre(3, 2));
}

TEST(BatchAssemblyTest, GatherConcatenatesBytesInputsOfDifferentSizes) {
  std::vector<PendingRequest> batch;
  for (const std::vector<std::string_view>& strings :
       {std::vector<std::string_view>{"a", "bcd"}, std::vector<std::string_view>{""}}) {
    PendingRequest pending;
    pending.request = std::make_unique<InferRequest>();
    const auto rows = static_cast<int64_t>(strings.size());
    pending.request->inputs.push_back({"t", MakeBytesTensor({rows, 1}, strings).value()});
    pending.rows = rows;
    batch.push_back(std::move(pending));
  }

  absl::StatusOr<std::vector<Tensor>> inputs = GatherInputs(batch);

  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_THAT((*inputs)[0].shape(), ElementsAre(3, 1));
  EXPECT_THAT(BytesElements((*inputs)[0]), ElementsAre("a", "bcd", ""));
}

TEST(BatchAssemblyTest, ConcatenateStacksBytesRowsOfDifferentSizes) {
  const std::string long_row(10000, 'x');
  std::vector<std::string_view> first{"a"}, second{long_row};
  Tensor a = MakeBytesTensor({1}, first).value();
  Tensor b = MakeBytesTensor({1}, second).value();
  std::vector<const Tensor*> parts{&a, &b};
  absl::StatusOr<Tensor> joined = ConcatenateTensors(parts, {2, 1});
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_EQ(joined->byte_size(), a.byte_size() + b.byte_size());
  EXPECT_TRUE(ValidateBytesBuffer({joined->data(), joined->byte_size()}, 2, "joined").ok());
  EXPECT_THAT(BytesElements(*joined), ElementsAre("a", long_row));
}

TEST(BatchAssemblyTest, ConcatenateRefusesMixedDatatypes) {
  Tensor a = Counting(1, 2, 0);
  Tensor b = Tensor::Allocate(DataType::kInt64, {1, 2}).value();
  std::vector<const Tensor*> parts{&a, &b};
  EXPECT_THAT(ConcatenateTensors(parts, {2, 2}).status().message(), HasSubstr("cannot join"));
}

TEST(BatchAssemblyTest, GatherConcatenatesRowsInBatchOrder) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(1, 100));
  batch.push_back(Pending(2, 200));
  batch.push_back(Pending(1, 300));

  absl::StatusOr<std::vector<Tensor>> inputs = GatherInputs(batch);

  ASSERT_TRUE(inputs.ok()) << inputs.status();
  ASSERT_THAT(*inputs, SizeIs(2));
  const Tensor& a = (*inputs)[0];
  EXPECT_EQ(a.type(), DataType::kFp32);
  EXPECT_THAT(a.shape(), ElementsAre(4, 2));
  EXPECT_THAT(Floats(a), ElementsAre(100, 101, 200, 201, 202, 203, 300, 301));
  const Tensor& b = (*inputs)[1];
  EXPECT_THAT(b.shape(), ElementsAre(4, 1));
  EXPECT_THAT(Floats(b), ElementsAre(100, 200, 200, 300));
  // A new buffer: the requests' own tensors are untouched.
  EXPECT_NE(a.data(), batch[0].request->inputs[0].tensor.data());
  EXPECT_THAT(Floats(batch[1].request->inputs[0].tensor), ElementsAre(200, 201, 202, 203));
}

TEST(BatchAssemblyTest, ScatterGivesEachRequestItsRowsAsViewsOfTheOutput) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(1, 0));
  batch.push_back(Pending(2, 0));
  batch.push_back(Pending(1, 0));
  const std::vector<Tensor> outputs = {Counting(4, 3, 0), Counting(4, 1, 50)};

  absl::StatusOr<std::vector<std::vector<Tensor>>> split = ScatterOutputs(outputs, batch);

  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_THAT(*split, SizeIs(3));
  for (const std::vector<Tensor>& mine : *split) ASSERT_THAT(mine, SizeIs(2));
  const std::vector<std::vector<Tensor>>& per = *split;
  EXPECT_THAT(per[0][0].shape(), ElementsAre(1, 3));
  EXPECT_THAT(Floats(per[0][0]), ElementsAre(0, 1, 2));
  EXPECT_THAT(per[1][0].shape(), ElementsAre(2, 3));
  EXPECT_THAT(Floats(per[1][0]), ElementsAre(3, 4, 5, 6, 7, 8));
  EXPECT_THAT(per[2][0].shape(), ElementsAre(1, 3));
  EXPECT_THAT(Floats(per[2][0]), ElementsAre(9, 10, 11));
  EXPECT_THAT(Floats(per[0][1]), ElementsAre(50));
  EXPECT_THAT(Floats(per[1][1]), ElementsAre(51, 52));
  EXPECT_THAT(Floats(per[2][1]), ElementsAre(53));

  // Views, not copies: they point into the output and keep its buffer alive.
  EXPECT_EQ(per[0][0].data(), outputs[0].data());
  EXPECT_EQ(per[1][0].data(), outputs[0].data() + 3 * sizeof(float));
  EXPECT_EQ(per[2][0].data(), outputs[0].data() + 9 * sizeof(float));
  for (const std::vector<Tensor>& mine : per) {
    EXPECT_EQ(mine[0].owner(), outputs[0].owner());
    EXPECT_EQ(mine[1].owner(), outputs[1].owner());
  }
}

TEST(BatchAssemblyTest, ScatteredViewsOutliveTheBatchOutputs) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(1, 0));
  batch.push_back(Pending(1, 0));
  absl::StatusOr<std::vector<std::vector<Tensor>>> split;
  {
    const std::vector<Tensor> outputs = {Counting(2, 2, 7)};
    split = ScatterOutputs(outputs, batch);
  }
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_THAT(Floats((*split)[1][0]), ElementsAre(9, 10));
}

TEST(BatchAssemblyTest, ScatterOfOneRequestReturnsTheOutputsAsTheyAre) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(2, 0));
  const std::vector<Tensor> outputs = {Counting(2, 3, 0)};

  absl::StatusOr<std::vector<std::vector<Tensor>>> split = ScatterOutputs(outputs, batch);

  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_THAT(*split, SizeIs(1));
  ASSERT_THAT((*split)[0], SizeIs(1));
  EXPECT_EQ((*split)[0][0].data(), outputs[0].data());
}

TEST(BatchAssemblyTest, ScatterRejectsOutputWhoseFirstDimensionIsNotTheBatch) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(1, 0));
  batch.push_back(Pending(2, 0));
  const std::vector<Tensor> outputs = {Counting(3, 1, 0), Counting(2, 1, 0)};

  absl::StatusOr<std::vector<std::vector<Tensor>>> split = ScatterOutputs(outputs, batch);

  EXPECT_EQ(split.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(split.status().message()),
              AllOf(HasSubstr("[2,1]"), HasSubstr("batch of 3 rows"),
                    HasSubstr("cannot be split per request")));
}

TEST(BatchAssemblyTest, ScatterRejectsScalarOutput) {
  std::vector<PendingRequest> batch;
  batch.push_back(Pending(1, 0));
  batch.push_back(Pending(1, 0));
  const std::vector<Tensor> outputs = {Tensor::Allocate(DataType::kFp32, {}).value()};
  EXPECT_EQ(ScatterOutputs(outputs, batch).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace inferd
