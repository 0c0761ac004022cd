#include "core/config/pipeline_spec_parser.h"

#include <set>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/config/pipeline_graph.h"

namespace inferd {
namespace {

// `inputs:` / `outputs:` of a step: port -> scope name.
absl::StatusOr<std::map<std::string, std::string>> ParsePortMap(const FieldReader& reader,
                                                                const YAML::Node& node,
                                                                const std::string& field) {
  if (!node || !node.IsMap() || node.size() == 0) {
    return reader.Error(field, "must be a non-empty mapping of port: scope name");
  }
  std::map<std::string, std::string> ports;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return reader.Error(field, "port names must be strings");
    const std::string port = entry.first.as<std::string>();
    ASSIGN_OR_RETURN(std::string scope, reader.String(entry.second, StrCat(field, ".", port)));
    if (!ports.emplace(port, std::move(scope)).second) {
      return reader.Error(StrCat(field, ".", port), "is given twice");
    }
  }
  return ports;
}

absl::StatusOr<PipelineStepSpec> ParseStep(const FieldReader& reader, const YAML::Node& node,
                                           const std::string& field) {
  RETURN_IF_ERROR(reader.CheckKeys(
      node, field, {"name", "op", "model", "version", "inputs", "outputs", "params"}));
  PipelineStepSpec step;
  if (!node["name"]) return reader.Error(field + ".name", "is required");
  ASSIGN_OR_RETURN(step.name, reader.String(node["name"], field + ".name"));
  if (static_cast<bool>(node["op"]) == static_cast<bool>(node["model"])) {
    return reader.Error(field,
                        "needs exactly one of op (a built-in op) or model (a repository "
                        "model)");
  }
  if (node["op"]) {
    ASSIGN_OR_RETURN(step.op, reader.String(node["op"], field + ".op"));
    if (node["version"]) return reader.Error(field + ".version", "is for model steps only");
  } else {
    ASSIGN_OR_RETURN(step.model, reader.String(node["model"], field + ".model"));
    if (node["params"]) {
      return reader.Error(field + ".params",
                          "is for op steps only (a model takes its "
                          "settings from its own config.yaml)");
    }
    if (node["version"]) {
      ASSIGN_OR_RETURN(step.version,
                       reader.IntegerIn(node["version"], field + ".version", 1, int64_t{1} << 53));
    }
  }
  ASSIGN_OR_RETURN(step.inputs, ParsePortMap(reader, node["inputs"], field + ".inputs"));
  ASSIGN_OR_RETURN(step.outputs, ParsePortMap(reader, node["outputs"], field + ".outputs"));
  if (const YAML::Node params = node["params"]; params && !params.IsNull()) {
    if (!params.IsMap()) return reader.Error(field + ".params", "must be a mapping");
    step.params_yaml = YAML::Dump(params);
  }
  return step;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const PipelineSpec>> ParsePipelineSpec(
    const FieldReader& reader, const YAML::Node& node, const std::vector<TensorSpec>& inputs,
    const std::vector<TensorSpec>& outputs) {
  RETURN_IF_ERROR(reader.CheckKeys(node, "pipeline", {"steps", "answer"}));
  const YAML::Node steps = node["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) {
    return reader.Error("pipeline.steps", "must be a non-empty list of steps");
  }
  if (steps.size() > kMaxPipelineSteps) {
    return reader.Error("pipeline.steps", StrCat("has ", steps.size(), " steps; at most ",
                                                 kMaxPipelineSteps, " are allowed"));
  }
  auto spec = std::make_shared<PipelineSpec>();
  std::set<std::string> step_names;
  // Every scope name: the pipeline's inputs, then each step output.
  std::set<std::string> known;
  for (const TensorSpec& input : inputs) known.insert(input.name);
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string field = StrCat("pipeline.steps[", i, "]");
    ASSIGN_OR_RETURN(PipelineStepSpec step, ParseStep(reader, steps[i], field));
    if (!step_names.insert(step.name).second) {
      return reader.Error(field + ".name", StrCat("'", step.name, "' names two steps"));
    }
    for (const auto& [port, scope] : step.outputs) {
      if (!known.insert(scope).second) {
        return reader.Error(StrCat(field, ".outputs.", port),
                            StrCat("'", scope,
                                   "' is already a pipeline input or another step's output "
                                   "(each name is produced once)"));
      }
    }
    spec->steps.push_back(std::move(step));
  }
  for (size_t i = 0; i < spec->steps.size(); ++i) {
    for (const auto& [port, scope] : spec->steps[i].inputs) {
      if (!known.count(scope)) {
        return reader.Error(
            StrCat("pipeline.steps[", i, "].inputs.", port),
            StrCat("'", scope, "' is not a pipeline input or a step's output (known: ",
                   StrJoin(known, ", "), ")"));
      }
    }
  }
  ASSIGN_OR_RETURN(spec->topological_order, OrderSteps(reader, *spec));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!known.count(outputs[i].name)) {
      return reader.Error(StrCat("outputs[", i, "].name"),
                          StrCat("'", outputs[i].name, "' is not produced by any step (known: ",
                                 StrJoin(known, ", "), ")"));
    }
  }
  if (const YAML::Node answer = node["answer"]) {
    RETURN_IF_ERROR(reader.CheckKeys(answer, "pipeline.answer", {"labels", "scores"}));
    for (const auto& entry : answer) {
      const std::string key = entry.first.as<std::string>();
      const std::string field = StrCat("pipeline.answer.", key);
      ASSIGN_OR_RETURN(std::string name, reader.String(entry.second, field));
      bool is_output = false;
      for (const TensorSpec& output : outputs) is_output = is_output || output.name == name;
      if (!is_output) {
        std::vector<std::string> names;
        for (const TensorSpec& output : outputs) names.push_back(output.name);
        return reader.Error(field, StrCat("'", name, "' is not one of the pipeline's outputs (",
                                          StrJoin(names, ", "), ")"));
      }
      spec->answer.emplace(key, std::move(name));
    }
  }
  return std::shared_ptr<const PipelineSpec>(std::move(spec));
}

}  // namespace inferd
