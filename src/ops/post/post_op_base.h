// What the post-processing ops share: fixed ports given at construction, light (they run
// inline in the completion of the step that feeds them), and their params read through a
// FieldReader so errors name "pipeline.steps[i]: params.<field>".
#ifndef INFERD_OPS_POST_POST_OP_BASE_H_
#define INFERD_OPS_POST_POST_OP_BASE_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "core/config/config_field_reader.h"
#include "core/pipeline/op_params.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

class PostOp : public PipelineOp {
 public:
  PostOp(std::vector<TensorSpec> inputs, std::vector<TensorSpec> outputs)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  const std::vector<TensorSpec>& outputs() const override { return outputs_; }
  bool heavy() const override { return false; }

 private:
  const std::vector<TensorSpec> inputs_;
  const std::vector<TensorSpec> outputs_;
};

// Checks that `x` is FP32 of rank >= 2 ([B, ..., C]) and returns C (the last dimension);
// InvalidArgument naming `op` otherwise.
absl::StatusOr<int64_t> LastAxisOf(const Tensor& x, std::string_view op);

}  // namespace inferd

#endif  // INFERD_OPS_POST_POST_OP_BASE_H_
