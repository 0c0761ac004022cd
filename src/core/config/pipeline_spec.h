// A pipeline's `pipeline:` section as config.yaml declares it: named steps, each a built-in
// op or a repository model, wired through named scope slots. Parsed and checked for shape
// (names, cycles, unproduced values) by ParsePipelineSpec without the repository or the op
// list; the ops and the step models are checked when the pipeline loads
// (backends/pipeline).
//
// Thread-safety: immutable once parsed; shared by ModelConfig copies.
#ifndef INFERD_CORE_CONFIG_PIPELINE_SPEC_H_
#define INFERD_CORE_CONFIG_PIPELINE_SPEC_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace inferd {

struct PipelineStepSpec {
  std::string name;
  // Exactly one of `op` (a built-in op) and `model` (a repository model) is set.
  std::string op;
  std::string model;
  std::optional<int64_t> version;  // model steps only; else the traffic rules pick
  // Port (an op's or a model's input/output name) -> scope name, ordered by port.
  std::map<std::string, std::string> inputs;
  std::map<std::string, std::string> outputs;
  // The step's `params:` as YAML text (empty when absent); ops parse it at load.
  std::string params_yaml;

  bool is_model() const { return !model.empty(); }
};

struct PipelineSpec {
  // In config order (errors name steps[i] by this index).
  std::vector<PipelineStepSpec> steps;
  // Step indices in an order where every step comes after the steps it reads from.
  std::vector<size_t> topological_order;
  // How POST /predict answers (key -> pipeline output name); empty: as any model.
  std::map<std::string, std::string> answer;
};

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_PIPELINE_SPEC_H_
