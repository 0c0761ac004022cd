// Parses a pipeline's `pipeline:` section (core/config/pipeline_spec.h) and checks what can
// be checked without the repository or the op list: keys, one of op/model per step, unique
// names, every scope name read is produced, no cycles, every pipeline output produced, the
// answer's names. Errors name the field: "pipeline.steps[2].inputs.x: ...".
#ifndef INFERD_CORE_CONFIG_PIPELINE_SPEC_PARSER_H_
#define INFERD_CORE_CONFIG_PIPELINE_SPEC_PARSER_H_

#include <memory>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "core/config/config_field_reader.h"
#include "core/config/model_config.h"
#include "core/config/pipeline_spec.h"

namespace inferd {

// The most steps one pipeline may have: each is a node of a graph walked per request.
inline constexpr size_t kMaxPipelineSteps = 256;

absl::StatusOr<std::shared_ptr<const PipelineSpec>> ParsePipelineSpec(
    const FieldReader& reader, const YAML::Node& node, const std::vector<TensorSpec>& inputs,
    const std::vector<TensorSpec>& outputs);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_PIPELINE_SPEC_PARSER_H_
