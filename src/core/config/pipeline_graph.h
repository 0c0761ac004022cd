// The data-flow graph of a pipeline's steps: which step produces each scope name, and an
// order in which every step follows the steps it reads from (Kahn's algorithm). Steps may be
// listed in any order in config.yaml; a cycle is reported as a path of step names.
#ifndef INFERD_CORE_CONFIG_PIPELINE_GRAPH_H_
#define INFERD_CORE_CONFIG_PIPELINE_GRAPH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/config_field_reader.h"
#include "core/config/pipeline_spec.h"

namespace inferd {

// Scope name -> index of the step that produces it (pipeline inputs are not in it).
std::map<std::string, size_t> ProducerIndex(const PipelineSpec& spec);

// Step indices in dependency order. Expects names already checked (every scope name read is
// a pipeline input or some step's output, each produced once). A cycle is InvalidArgument:
// "pipeline.steps: cycle a -> b -> a (steps[0].inputs.x reads b's output 'y')".
absl::StatusOr<std::vector<size_t>> OrderSteps(const FieldReader& reader, const PipelineSpec& spec);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_PIPELINE_GRAPH_H_
