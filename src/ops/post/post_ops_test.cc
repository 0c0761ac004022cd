#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/pipeline/op_registry.h"
#include "core/testing/temp_dir.h"
#include "core/types/bytes_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/post/register_post_ops.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PostOpsTest : public ::testing::Test {
 protected:
  PostOpsTest() { RegisterPostOps(registry_); }

  absl::StatusOr<std::unique_ptr<PipelineOp>> Make(const std::string& op,
                                                   const std::string& params = "") {
    const OpFactory* factory = registry_.Find(op);
    EXPECT_NE(factory, nullptr) << op;
    return (*factory)(
        OpLoadRequest{"models/p/config.yaml: pipeline.steps[1]", params, dir_.path()});
  }

  void WriteFile(const std::string& name, const std::string& text) {
    std::ofstream(dir_.path() / name) << text;
  }

  static Tensor Floats(Shape shape, std::vector<float> values) {
    Tensor t = Tensor::Allocate(DataType::kFp32, std::move(shape)).value();
    for (size_t i = 0; i < values.size(); ++i) t.mutable_data_as<float>()[i] = values[i];
    return t;
  }
  static std::vector<float> FloatsOf(const Tensor& t) {
    return {t.data_as<float>(), t.data_as<float>() + t.element_count()};
  }

  std::vector<Tensor> Run(const PipelineOp& op, Tensor x) {
    std::vector<Tensor> in{std::move(x)};
    absl::StatusOr<std::vector<Tensor>> out = op.Run(in);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *std::move(out) : std::vector<Tensor>{};
  }

  OpRegistry registry_;
  testing::TempDir dir_{"post_ops"};
};

TEST_F(PostOpsTest, RegistersEveryPostOp) {
  EXPECT_THAT(registry_.Names(),
              ElementsAre("argmax", "reshape", "sigmoid", "softmax", "threshold", "top_k"));
}

TEST_F(PostOpsTest, SoftmaxIsMaxSubtractedOverTheLastAxisPerRow) {
  auto op = Make("softmax").value();
  EXPECT_FALSE(op->heavy());
  // Large logits would overflow exp() without subtracting the max.
  const std::vector<Tensor> out = Run(*op, Floats({2, 3}, {1000, 1001, 1002, 0, 0, 0}));
  const std::vector<float> y = FloatsOf(out.at(0));
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), sum = 1 + e1 + e2;
  EXPECT_NEAR(y[0], e2 / sum, 1e-6);
  EXPECT_NEAR(y[2], 1 / sum, 1e-6);
  EXPECT_NEAR(y[3], 1.0 / 3, 1e-6);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
}

TEST_F(PostOpsTest, SigmoidIsElementWise) {
  auto op = Make("sigmoid").value();
  const std::vector<float> y = FloatsOf(Run(*op, Floats({1, 2}, {0, 2})).at(0));
  EXPECT_NEAR(y[0], 0.5, 1e-6);
  EXPECT_NEAR(y[1], 1 / (1 + std::exp(-2.0)), 1e-6);
}

TEST_F(PostOpsTest, SoftmaxRefusesParamsAndNonFloatInput) {
  EXPECT_THAT(Make("softmax", "axis: 0").status().message(),
              HasSubstr("models/p/config.yaml: pipeline.steps[1]: params.axis: unknown field"));
  auto op = Make("softmax").value();
  std::vector<Tensor> in{Tensor::Allocate(DataType::kInt64, {1, 2}).value()};
  EXPECT_EQ(op->Run(in).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PostOpsTest, TopKReturnsIndicesScoresAndLabelsWithTiesLowerIndexFirst) {
  WriteFile("labels.txt", "cat\ndog\r\nbird\nfish\n");
  auto op = Make("top_k", "{k: 3, labels: labels.txt}").value();
  EXPECT_EQ(op->inputs()[0].dims, (Shape{4}));  // the labels count, checked against producers
  EXPECT_EQ(op->outputs()[2].datatype, DataType::kBytes);
  const std::vector<Tensor> out =
      Run(*op, Floats({2, 4}, {0.1f, 0.5f, 0.5f, 0.2f, 0.9f, NAN, 0.0f, 0.3f}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  const int64_t* idx = out[0].data_as<int64_t>();
  EXPECT_THAT(std::vector<int64_t>(idx, idx + 6), ElementsAre(1, 2, 3, 0, 3, 2));
  EXPECT_THAT(FloatsOf(out[1]), ElementsAre(0.5f, 0.5f, 0.2f, 0.9f, 0.3f, 0.0f));
  EXPECT_THAT(BytesElements(out[2]), ElementsAre("dog", "bird", "fish", "cat", "fish", "bird"));
}

TEST_F(PostOpsTest, TopKWithoutLabelsNamesClassesByIndex) {
  auto op = Make("top_k", "{k: 2}").value();
  const std::vector<Tensor> out = Run(*op, Floats({1, 3}, {0.2f, 0.7f, 0.1f}));
  EXPECT_THAT(BytesElements(out[2]), ElementsAre("1", "0"));
  std::vector<Tensor> too_few{Floats({1, 1}, {1})};
  EXPECT_THAT(op->Run(too_few).status().message(), HasSubstr("fewer than k = 2"));
}

TEST_F(PostOpsTest, TopKParamErrorsNameTheirField) {
  EXPECT_THAT(Make("top_k", "{}").status().message(), HasSubstr("params.k: is required"));
  EXPECT_THAT(Make("top_k", "{k: 0}").status().message(), HasSubstr("params.k:"));
  EXPECT_THAT(Make("top_k", "{k: 1, labels: missing.txt}").status().message(),
              HasSubstr("params.labels: cannot read"));
  EXPECT_THAT(Make("top_k", "{k: 1, labels: ../../etc/passwd}").status().message(),
              HasSubstr("params.labels: '../../etc/passwd' leaves the version folder"));
  EXPECT_THAT(Make("top_k", "{k: 1, labels: /etc/passwd}").status().message(),
              HasSubstr("params.labels: '/etc/passwd' is absolute"));
  WriteFile("two.txt", "a\nb\n");
  EXPECT_THAT(Make("top_k", "{k: 3, labels: two.txt}").status().message(),
              HasSubstr("params.labels: has 2 labels, fewer than k = 3"));
  EXPECT_THAT(Make("top_k", "{k: 1, colour: red}").status().message(),
              HasSubstr("params.colour: unknown field"));
}

TEST_F(PostOpsTest, ArgmaxGivesIndexScoreAndLabel) {
  WriteFile("labels.txt", "no\nyes\n");
  auto op = Make("argmax", "{labels: labels.txt}").value();
  const std::vector<Tensor> out = Run(*op, Floats({2, 2}, {0.2f, 0.8f, 0.6f, 0.4f}));
  EXPECT_EQ(out[0].shape(), (Shape{2, 1}));
  EXPECT_THAT(std::vector<int64_t>(out[0].data_as<int64_t>(), out[0].data_as<int64_t>() + 2),
              ElementsAre(1, 0));
  EXPECT_THAT(FloatsOf(out[1]), ElementsAre(0.8f, 0.6f));
  EXPECT_THAT(BytesElements(out[2]), ElementsAre("yes", "no"));
}

TEST_F(PostOpsTest, ThresholdGivesABoolMask) {
  auto op = Make("threshold", "{value: 0.5}").value();
  const std::vector<Tensor> out = Run(*op, Floats({1, 4}, {0.1f, 0.5f, 0.9f, NAN}));
  EXPECT_EQ(out[0].type(), DataType::kBool);
  const uint8_t* mask = out[0].data_as<uint8_t>();
  EXPECT_THAT(std::vector<uint8_t>(mask, mask + 4), ElementsAre(0, 1, 1, 0));
  EXPECT_THAT(Make("threshold").status().message(), HasSubstr("params.value: is required"));
  EXPECT_THAT(Make("threshold", "{value: high}").status().message(),
              HasSubstr("params.value: must be a number"));
}

TEST_F(PostOpsTest, ReshapeIsAViewOverTheSameBytes) {
  auto op = Make("reshape", "{shape: [2, -1]}").value();
  Tensor x = Floats({3, 6}, {});
  const std::vector<Tensor> out = Run(*op, x);
  EXPECT_EQ(out[0].shape(), (Shape{3, 2, 3}));
  EXPECT_EQ(out[0].data(), x.data());
  auto fixed = Make("reshape", "{shape: [4]}").value();
  std::vector<Tensor> in{x};
  EXPECT_THAT(fixed->Run(in).status().message(), HasSubstr("do not fit"));
  EXPECT_THAT(Make("reshape", "{shape: [-1, -1]}").status().message(),
              HasSubstr("params.shape: may have at most one -1"));
  EXPECT_THAT(Make("reshape", "{shape: [2], datatype: BYTES}").status().message(),
              HasSubstr("params.datatype:"));
}

}  // namespace
}  // namespace inferd
