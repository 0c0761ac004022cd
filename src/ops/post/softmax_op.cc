#include "ops/post/softmax_op.h"

#include <algorithm>
#include <cmath>

#include "common/status_macros.h"
#include "ops/post/post_op_base.h"

namespace inferd {
namespace {

enum class Activation { kSoftmax, kSigmoid };

class ActivationOp : public PostOp {
 public:
  explicit ActivationOp(Activation activation)
      : PostOp({TensorSpec{"x", DataType::kFp32, {-1}}}, {TensorSpec{"y", DataType::kFp32, {-1}}}),
        activation_(activation) {}

  bool accepts_any_dims() const override { return true; }
  bool preserves_dims() const override { return true; }

  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const override {
    const Tensor& x = inputs[0];
    ASSIGN_OR_RETURN(const int64_t classes,
                     LastAxisOf(x, activation_ == Activation::kSoftmax ? "softmax" : "sigmoid"));
    ASSIGN_OR_RETURN(Tensor y, Tensor::AllocateForOverwrite(DataType::kFp32, x.shape()));
    const float* in = x.data_as<float>();
    float* out = y.mutable_data_as<float>();
    const int64_t rows = x.element_count() / classes;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = in + r * classes;
      float* result = out + r * classes;
      if (activation_ == Activation::kSigmoid) {
        for (int64_t c = 0; c < classes; ++c) result[c] = 1.0f / (1.0f + std::exp(-row[c]));
        continue;
      }
      const float max = *std::max_element(row, row + classes);
      float sum = 0;
      for (int64_t c = 0; c < classes; ++c) {
        result[c] = std::exp(row[c] - max);
        sum += result[c];
      }
      for (int64_t c = 0; c < classes; ++c) result[c] /= sum;
    }
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(y));
    return outputs;
  }

 private:
  const Activation activation_;
};

absl::StatusOr<std::unique_ptr<PipelineOp>> Make(const OpLoadRequest& request,
                                                 Activation activation) {
  FieldReader reader(request.field);
  RETURN_IF_ERROR(LoadOpParams(request, reader, {}).status());
  return std::make_unique<ActivationOp>(activation);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeSoftmaxOp(const OpLoadRequest& request) {
  return Make(request, Activation::kSoftmax);
}

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeSigmoidOp(const OpLoadRequest& request) {
  return Make(request, Activation::kSigmoid);
}

}  // namespace inferd
