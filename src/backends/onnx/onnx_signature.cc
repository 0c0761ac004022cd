#include "backends/onnx/onnx_signature.h"

#include <string_view>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(std::to_string(d));
  return StrCat("[", StrJoin(parts, ", "), "]");
}

absl::Status CheckOne(const ModelConfig& config, const TensorSpec& spec, const GraphTensor& graph,
                      std::string_view field, const std::string& config_path) {
  auto error = [&](std::string_view sub, std::string_view message) {
    return absl::InvalidArgumentError(StrCat(config_path, ": ", field, sub, ": ", message));
  };
  if (!graph.type) {
    return error(".datatype", StrCat("the graph's '", graph.name, "' has element type ",
                                     graph.type_name, ", which the protocol cannot carry"));
  }
  if (*graph.type != spec.datatype) {
    return error(".datatype", StrCat(DataTypeName(spec.datatype), ", but the graph's '", graph.name,
                                     "' is ", DataTypeName(*graph.type)));
  }
  const Shape full = config.FullShape(spec);
  if (graph.dims.size() != full.size()) {
    return error(".dims",
                 StrCat("declares ", full.size(),
                        " dimensions (batch included) but the "
                        "graph's '",
                        graph.name, "' has ", graph.dims.size(), " ", DimsText(graph.dims)));
  }
  size_t first = 0;
  if (config.batched()) {
    first = 1;
    if (graph.dims[0] != -1) {
      return error("", StrCat("max_batch_size is ", config.max_batch_size,
                              " but the graph fixes "
                              "the first dimension of '",
                              graph.name, "' at ", graph.dims[0],
                              "; export with a dynamic batch axis (tools/optimize/export does)"));
    }
  }
  for (size_t i = first; i < full.size(); ++i) {
    if (full[i] != -1 && graph.dims[i] != -1 && full[i] != graph.dims[i]) {
      return error(".dims", StrCat(DimsText(spec.dims), " but the graph's '", graph.name, "' is ",
                                   DimsText(graph.dims)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSide(const ModelConfig& config, const std::vector<TensorSpec>& specs,
                       const std::vector<GraphTensor>& graph, std::string_view side,
                       const std::string& config_path) {
  std::vector<std::string> graph_names;
  for (const GraphTensor& t : graph) graph_names.push_back(t.name);
  if (specs.size() != graph.size()) {
    return absl::InvalidArgumentError(StrCat(config_path, ": ", side, ": declares ", specs.size(),
                                             " but the graph has ", graph.size(), " (",
                                             StrJoin(graph_names, ", "), ")"));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string field = StrCat(side, "[", i, "]");
    const GraphTensor* match = nullptr;
    for (const GraphTensor& t : graph) {
      if (t.name == specs[i].name) match = &t;
    }
    if (match == nullptr) {
      return absl::InvalidArgumentError(StrCat(config_path, ": ", field, ".name: the graph has no ",
                                               side, " named '", specs[i].name, "' (its ", side,
                                               ": ", StrJoin(graph_names, ", "), ")"));
    }
    if (absl::Status s = CheckOne(config, specs[i], *match, field, config_path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool HasDynamicFirstDim(const std::vector<GraphTensor>& tensors) {
  for (const GraphTensor& t : tensors) {
    if (t.dims.empty() || t.dims[0] != -1) return false;
  }
  return true;
}

absl::Status FillFromGraph(const ModelConfig& config, const std::vector<GraphTensor>& graph,
                           std::string_view side, const std::string& config_path,
                           std::vector<TensorSpec>& specs) {
  for (const GraphTensor& t : graph) {
    if (!t.type) {
      return absl::InvalidArgumentError(StrCat(config_path, ": ", side, ": the graph's '", t.name,
                                               "' has element type ", t.type_name,
                                               ", which the protocol cannot carry"));
    }
    TensorSpec spec{t.name, *t.type, t.dims};
    if (config.batched()) {
      if (t.dims.empty() || t.dims[0] != -1) {
        return absl::InvalidArgumentError(StrCat(
            config_path, ": max_batch_size is ", config.max_batch_size, " but the graph's '",
            t.name, "' has ",
            t.dims.empty() ? "no dimensions" : StrCat("a fixed first dimension ", DimsText(t.dims)),
            "; set max_batch_size: 0, or export with a dynamic batch axis (tools/optimize/export "
            "does)"));
      }
      spec.dims.erase(spec.dims.begin());
    }
    specs.push_back(std::move(spec));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelConfig> CompleteConfigFromGraph(const ModelConfig& config,
                                                    const GraphSignature& graph,
                                                    const std::string& config_path) {
  ModelConfig completed = config;
  // Like Triton's auto-complete, max_batch_size 0 (or none) with a dynamic first dimension
  // in every graph tensor means a batch axis. Such a config had no dynamic_batching entry
  // (parsing refuses one without max_batch_size), so it gets the default batching
  // (DynamicBatchingConfig: no queue delay, batches of what has queued).
  if (!config.batched() && !graph.inputs.empty() && HasDynamicFirstDim(graph.inputs) &&
      HasDynamicFirstDim(graph.outputs) && (config.inputs.empty() && config.outputs.empty())) {
    completed.max_batch_size = kCompletedMaxBatchSize;
    completed.dynamic_batching.enabled = true;
    completed.dynamic_batching.by_default = true;
  }
  if (completed.inputs.empty()) {
    RETURN_IF_ERROR(
        FillFromGraph(completed, graph.inputs, "inputs", config_path, completed.inputs));
  }
  if (completed.outputs.empty()) {
    RETURN_IF_ERROR(
        FillFromGraph(completed, graph.outputs, "outputs", config_path, completed.outputs));
  }
  if (completed.inputs.empty() || completed.outputs.empty()) {
    return absl::InvalidArgumentError(StrCat(config_path, ": the graph has no ",
                                             completed.inputs.empty() ? "inputs" : "outputs",
                                             "; inferd serves graphs with at least one of each"));
  }
  return completed;
}

absl::Status CheckGraphSignature(const ModelConfig& config, const GraphSignature& graph,
                                 const std::string& config_path) {
  if (absl::Status s = CheckSide(config, config.inputs, graph.inputs, "inputs", config_path);
      !s.ok()) {
    return s;
  }
  return CheckSide(config, config.outputs, graph.outputs, "outputs", config_path);
}

}  // namespace inferd
