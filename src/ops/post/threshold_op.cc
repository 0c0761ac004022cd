#include "ops/post/threshold_op.h"

#include <cmath>

#include "common/status_macros.h"
#include "ops/post/post_op_base.h"

namespace inferd {
namespace {

class ThresholdOp : public PostOp {
 public:
  explicit ThresholdOp(float value)
      : PostOp({TensorSpec{"x", DataType::kFp32, {-1}}},
               {TensorSpec{"mask", DataType::kBool, {-1}}}),
        value_(value) {}

  bool accepts_any_dims() const override { return true; }
  bool preserves_dims() const override { return true; }

  absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const override {
    const Tensor& x = inputs[0];
    ASSIGN_OR_RETURN(const int64_t classes, LastAxisOf(x, "threshold"));
    (void)classes;
    ASSIGN_OR_RETURN(Tensor mask, Tensor::AllocateForOverwrite(DataType::kBool, x.shape()));
    const float* in = x.data_as<float>();
    uint8_t* out = mask.mutable_data_as<uint8_t>();
    for (int64_t i = 0; i < x.element_count(); ++i) out[i] = in[i] >= value_ ? 1 : 0;
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(mask));
    return outputs;
  }

 private:
  const float value_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeThresholdOp(const OpLoadRequest& request) {
  FieldReader reader(request.field);
  ASSIGN_OR_RETURN(YAML::Node params, LoadOpParams(request, reader, {"value"}));
  if (!params["value"]) return reader.Error("params.value", "is required (for example 0.5)");
  ASSIGN_OR_RETURN(const double value, reader.Number(params["value"], "params.value"));
  if (!std::isfinite(value)) return reader.Error("params.value", "must be a finite number");
  return std::make_unique<ThresholdOp>(static_cast<float>(value));
}

}  // namespace inferd
