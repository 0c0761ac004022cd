#include "backends/pipeline/pipeline_compiler.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/config/config_field_reader.h"
#include "core/config/pipeline_spec.h"

namespace inferd {
namespace {

// What one scope slot holds, as far as load time can tell.
struct SlotInfo {
  DataType type = DataType::kFp32;
  Shape dims;        // without the batch dimension
  std::string from;  // "the pipeline input 'x'", "steps[0] ('pre')"
  bool pipeline_input = false;
};

std::string Describe(DataType type, const Shape& dims) {
  return StrCat(DataTypeName(type), " ", ShapeToString(dims));
}

bool DimsCompatible(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != -1 && b[i] != -1) return false;
  }
  return true;
}

class Compiler {
 public:
  Compiler(const ModelConfig& config, const OpRegistry& ops, const ConfigLookup& models,
           const std::filesystem::path& version_dir, std::string_view source)
      : config_(config),
        spec_(*config.pipeline),
        ops_(ops),
        models_(models),
        version_dir_(version_dir),
        source_(source),
        reader_(source) {}

  absl::StatusOr<std::shared_ptr<const CompiledPipeline>> Compile() {
    auto compiled = std::make_shared<CompiledPipeline>();
    compiled->name = config_.name;
    compiled->batched = config_.batched();
    for (size_t i = 0; i < config_.inputs.size(); ++i) {
      const TensorSpec& input = config_.inputs[i];
      compiled->input_slots.push_back(
          NewSlot(input.name, SlotInfo{input.datatype, input.dims,
                                       StrCat("the pipeline input '", input.name, "'"), true}));
    }
    std::vector<size_t> compiled_index(spec_.steps.size());
    for (size_t order = 0; order < spec_.topological_order.size(); ++order) {
      const size_t i = spec_.topological_order[order];
      compiled_index[i] = order;
      ASSIGN_OR_RETURN(CompiledStep step, CompileStep(i));
      compiled->steps.push_back(std::move(step));
    }
    // Who consumes whom, by compiled index.
    std::map<size_t, size_t> producer_of_slot;  // slot -> compiled step
    for (size_t s = 0; s < compiled->steps.size(); ++s) {
      for (size_t slot : compiled->steps[s].output_slots) producer_of_slot[slot] = s;
    }
    for (size_t s = 0; s < compiled->steps.size(); ++s) {
      std::set<size_t> producers;
      for (size_t slot : compiled->steps[s].input_slots) {
        auto it = producer_of_slot.find(slot);
        if (it != producer_of_slot.end()) producers.insert(it->second);
      }
      compiled->steps[s].dependencies = producers.size();
      for (size_t p : producers) compiled->steps[p].consumers.push_back(s);
    }
    for (size_t i = 0; i < config_.outputs.size(); ++i) {
      const TensorSpec& output = config_.outputs[i];
      auto it = slots_.find(output.name);
      if (it == slots_.end()) {
        return reader_.Error(StrCat("outputs[", i, "].name"),
                             StrCat("'", output.name, "' is not produced by any step"));
      }
      const SlotInfo& info = infos_[it->second];
      if (info.type != output.datatype || !DimsCompatible(info.dims, output.dims)) {
        return reader_.Error(StrCat("outputs[", i, "]"),
                             StrCat("declares ", Describe(output.datatype, output.dims), "; ",
                                    info.from, " gives ", Describe(info.type, info.dims)));
      }
      compiled->output_slots.push_back(it->second);
    }
    compiled->slot_count = infos_.size();
    compiled->ops = std::move(owned_ops_);
    return std::shared_ptr<const CompiledPipeline>(std::move(compiled));
  }

 private:
  size_t NewSlot(const std::string& name, SlotInfo info) {
    const size_t slot = infos_.size();
    infos_.push_back(std::move(info));
    slots_.emplace(name, slot);
    return slot;
  }

  // The slot a step input reads (the parser checked that it exists).
  size_t SlotOf(const std::string& scope) const { return slots_.at(scope); }

  absl::StatusOr<CompiledStep> CompileStep(size_t i) {
    const PipelineStepSpec& spec = spec_.steps[i];
    CompiledStep step;
    step.name = spec.name;
    step.spec_index = i;
    if (spec.is_model()) {
      RETURN_IF_ERROR(CompileModelStep(i, &step));
    } else {
      RETURN_IF_ERROR(CompileOpStep(i, &step));
    }
    return step;
  }

  std::string Field(size_t i, std::string_view rest) const {
    return StrCat("pipeline.steps[", i, "]", rest);
  }

  absl::Status CheckFeeds(size_t i, const std::string& port, const std::string& consumer,
                          DataType type, const Shape* dims) const {
    const SlotInfo& info = infos_[SlotOf(spec_.steps[i].inputs.at(port))];
    if (info.type == type && (dims == nullptr || DimsCompatible(info.dims, *dims))) {
      return absl::OkStatus();
    }
    const std::string takes =
        dims == nullptr ? std::string(DataTypeName(type)) : Describe(type, *dims);
    return reader_.Error(Field(i, StrCat(".inputs.", port)),
                         StrCat(consumer, " takes ", takes, "; ", info.from, " gives ",
                                Describe(info.type, info.dims)));
  }

  absl::Status CompileOpStep(size_t i, CompiledStep* step) {
    const PipelineStepSpec& spec = spec_.steps[i];
    const OpFactory* factory = ops_.Find(spec.op);
    if (factory == nullptr) {
      return reader_.Error(
          Field(i, ".op"),
          StrCat("'", spec.op, "' is not an op (known: ", StrJoin(ops_.Names(), ", "), ")"));
    }
    OpLoadRequest request{StrCat(source_, ": ", Field(i, "")), spec.params_yaml, version_dir_};
    ASSIGN_OR_RETURN(std::unique_ptr<PipelineOp> op, (*factory)(request));
    const std::string consumer = StrCat("op '", spec.op, "'");
    std::set<std::string> ports;
    for (const TensorSpec& port : op->inputs()) {
      ports.insert(port.name);
      if (!spec.inputs.count(port.name)) {
        return reader_.Error(Field(i, ".inputs"),
                             StrCat("misses port '", port.name, "' (", consumer, " takes ",
                                    PortNames(op->inputs()), ")"));
      }
    }
    for (const auto& [port, scope] : spec.inputs) {
      if (!ports.count(port)) {
        return reader_.Error(
            Field(i, StrCat(".inputs.", port)),
            StrCat("is not an input port of ", consumer, " (", PortNames(op->inputs()), ")"));
      }
    }
    for (const TensorSpec& port : op->inputs()) {
      RETURN_IF_ERROR(CheckFeeds(i, port.name, consumer, port.datatype,
                                 op->accepts_any_dims() ? nullptr : &port.dims));
      const SlotInfo& info = infos_[SlotOf(spec.inputs.at(port.name))];
      if (op->heavy() && !info.pipeline_input) {
        return reader_.Error(Field(i, StrCat(".inputs.", port.name)),
                             StrCat(consumer,
                                    " is heavy (it runs on the pipeline's threads before any model "
                                    "step) and may read only pipeline inputs; ",
                                    info.from, " is not one"));
      }
      step->input_ports.push_back(port.name);
      step->input_slots.push_back(SlotOf(spec.inputs.at(port.name)));
    }
    const Shape passed_dims =
        op->inputs().empty() ? Shape{} : infos_[step->input_slots.front()].dims;
    for (const auto& [port, scope] : spec.outputs) {
      const std::vector<TensorSpec>& outputs = op->outputs();
      size_t index = 0;
      while (index < outputs.size() && outputs[index].name != port) ++index;
      if (index == outputs.size()) {
        return reader_.Error(
            Field(i, StrCat(".outputs.", port)),
            StrCat("is not an output port of ", consumer, " (", PortNames(outputs), ")"));
      }
      step->output_ports.push_back(port);
      step->op_output_index.push_back(index);
      step->output_slots.push_back(
          NewSlot(scope, SlotInfo{outputs[index].datatype,
                                  op->preserves_dims() ? passed_dims : outputs[index].dims,
                                  StrCat("steps[", i, "] ('", spec.name, "')"), false}));
    }
    step->heavy = op->heavy();
    step->op = op.get();
    owned_ops_.push_back(std::move(op));
    return absl::OkStatus();
  }

  absl::Status CompileModelStep(size_t i, CompiledStep* step) {
    const PipelineStepSpec& spec = spec_.steps[i];
    absl::StatusOr<std::shared_ptr<const ModelConfig>> found = models_.ConfigOf(spec.model);
    if (!found.ok()) {
      if (found.status().code() == absl::StatusCode::kNotFound) {
        return reader_.Error(Field(i, ".model"),
                             StrCat("no model '", spec.model, "' in the repository"));
      }
      return reader_.Error(Field(i, ".model"), StrCat("model '", spec.model,
                                                      "' is unusable: ", found.status().message()));
    }
    const ModelConfig& model = **found;
    const std::string consumer = StrCat("model '", spec.model, "'");
    if (model.capabilities.generates_text) {
      return reader_.Error(Field(i, ".model"),
                           StrCat(consumer,
                                  " generates text; a pipeline step takes a tensor "
                                  "model"));
    }
    if (model.capabilities.pipeline) {
      return reader_.Error(Field(i, ".model"),
                           StrCat(consumer, " is a pipeline; pipelines cannot be nested"));
    }
    if (config_.batched() && model.max_batch_size < config_.max_batch_size) {
      return reader_.Error(
          Field(i, ".model"),
          StrCat(consumer, " takes batches of at most ", model.max_batch_size,
                 " rows; the pipeline's max_batch_size is ", config_.max_batch_size));
    }
    step->model = spec.model;
    step->version = spec.version;
    step->model_unbatched = !model.batched();
    // A config that leaves its signature to the model file is checked when the step runs
    // (its refusal is a 500 naming the step).
    const bool declared = !model.inputs.empty() && !model.outputs.empty();
    if (declared) {
      for (const TensorSpec& input : model.inputs) {
        if (!spec.inputs.count(input.name)) {
          return reader_.Error(Field(i, ".inputs"),
                               StrCat("misses '", input.name, "' (", consumer, " takes ",
                                      PortNames(model.inputs), ")"));
        }
      }
    }
    for (const auto& [port, scope] : spec.inputs) {
      if (declared) {
        const TensorSpec* input = model.FindInput(port);
        if (input == nullptr) {
          return reader_.Error(
              Field(i, StrCat(".inputs.", port)),
              StrCat("is not an input of ", consumer, " (", PortNames(model.inputs), ")"));
        }
        RETURN_IF_ERROR(CheckFeeds(i, port, consumer, input->datatype, &input->dims));
      }
      step->input_ports.push_back(port);
      step->input_slots.push_back(SlotOf(scope));
    }
    for (const auto& [port, scope] : spec.outputs) {
      SlotInfo info{DataType::kFp32, {}, StrCat("steps[", i, "] ('", spec.name, "')"), false};
      if (declared) {
        const TensorSpec* output = model.FindOutput(port);
        if (output == nullptr) {
          return reader_.Error(
              Field(i, StrCat(".outputs.", port)),
              StrCat("is not an output of ", consumer, " (", PortNames(model.outputs), ")"));
        }
        info.type = output->datatype;
        info.dims = output->dims;
      } else {
        // Its signature is unknown until it loads, so nothing downstream could be checked.
        return reader_.Error(Field(i, ".model"),
                             StrCat(consumer,
                                    " does not declare inputs and outputs in its "
                                    "config.yaml; a pipeline step needs them"));
      }
      step->output_ports.push_back(port);
      step->output_slots.push_back(NewSlot(scope, std::move(info)));
    }
    return absl::OkStatus();
  }

  static std::string PortNames(const std::vector<TensorSpec>& specs) {
    std::vector<std::string> names;
    for (const TensorSpec& spec : specs) names.push_back(spec.name);
    return StrJoin(names, ", ");
  }

  const ModelConfig& config_;
  const PipelineSpec& spec_;
  const OpRegistry& ops_;
  const ConfigLookup& models_;
  const std::filesystem::path version_dir_;
  const std::string source_;
  const FieldReader reader_;
  std::vector<SlotInfo> infos_;
  std::map<std::string, size_t> slots_;
  std::vector<std::unique_ptr<PipelineOp>> owned_ops_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const CompiledPipeline>> CompilePipeline(
    const ModelConfig& config, const OpRegistry& ops, const ConfigLookup& models,
    const std::filesystem::path& version_dir, std::string_view source) {
  if (config.pipeline == nullptr) {
    return absl::InvalidArgumentError(StrCat(source, ": pipeline: is required"));
  }
  return Compiler(config, ops, models, version_dir, source).Compile();
}

}  // namespace inferd
