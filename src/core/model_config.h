// A model's config.yaml: what the user declares about a model, parsed and validated strictly.
//
// Every error names the file and the field (for example
// "models/mlp/config.yaml: inputs[0].datatype: 'FP33' is not a datatype"), because a user
// with twenty models needs to know which line to fix.
#ifndef INFERD_CORE_MODEL_CONFIG_H_
#define INFERD_CORE_MODEL_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/tensor.h"

namespace inferd {

// One input or output as the model declares it. With batching, `dims` excludes the batch
// dimension. -1 marks a variable dimension.
struct TensorSpec {
  std::string name;
  DataType datatype = DataType::kFp32;
  Shape dims;
};

struct InstanceGroup {
  int count = 1;
  std::string device = "cpu";
};

struct ModelConfig {
  std::string name;     // the model's folder name
  std::string backend;  // "torch"
  // 0: the model has no batch dimension. N > 0: the first dimension of every input and
  // output is the batch, of at most N rows.
  int max_batch_size = 0;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<InstanceGroup> instances;
  // Backend-specific settings; each backend rejects keys it does not know.
  std::map<std::string, std::string> parameters;

  bool batched() const { return max_batch_size > 0; }

  // The shape a client sees: -1 prepended for the batch dimension when the model batches.
  Shape FullShape(const TensorSpec& spec) const;

  const TensorSpec* FindInput(std::string_view input_name) const;
  const TensorSpec* FindOutput(std::string_view output_name) const;
};

// Parses and validates `yaml_text`. `model_name` is the folder name; `source` names the file
// in error messages.
absl::StatusOr<ModelConfig> ParseModelConfig(std::string_view yaml_text,
                                             std::string_view model_name, std::string_view source);

}  // namespace inferd

#endif  // INFERD_CORE_MODEL_CONFIG_H_
