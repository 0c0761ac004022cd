#include "backends/onnx/onnx_signature.h"

#include <string_view>

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

}  // namespace

absl::Status CheckGraphSignature(const ModelConfig& config, const GraphSignature& graph,
                                 const std::string& config_path) {
  if (absl::Status s = CheckSide(config, config.inputs, graph.inputs, "inputs", config_path);
      !s.ok()) {
    return s;
  }
  return CheckSide(config, config.outputs, graph.outputs, "outputs", config_path);
}

}  // namespace inferd
