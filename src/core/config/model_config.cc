#include "core/config/model_config.h"

#include <charconv>
#include <set>
#include <string>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/config/backend_kind.h"
#include "core/config/config_field_reader.h"
#include "core/config/lifecycle_config_yaml.h"
#include "core/config/pipeline_spec_parser.h"
#include "core/types/device.h"

namespace inferd {
namespace {

absl::StatusOr<std::vector<TensorSpec>> ParseTensorSpecs(const FieldReader& reader,
                                                         const YAML::Node& node,
                                                         const std::string& field) {
  // Left out: the backend reads the signature from the model file (or says what to add).
  if (!node) return std::vector<TensorSpec>{};
  if (!node.IsSequence() || node.size() == 0) {
    return reader.Error(field, "must be a non-empty list");
  }
  std::vector<TensorSpec> specs;
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item = StrCat(field, "[", i, "]");
    const YAML::Node& entry = node[i];
    RETURN_IF_ERROR(reader.CheckKeys(entry, item, {"name", "datatype", "dims", "content"}));
    for (const char* required : {"name", "datatype", "dims"}) {
      if (!entry[required]) return reader.Error(StrCat(item, ".", required), "is required");
    }
    TensorSpec spec;
    ASSIGN_OR_RETURN(spec.name, reader.String(entry["name"], StrCat(item, ".name")));
    if (!names.insert(spec.name).second) {
      return reader.Error(StrCat(item, ".name"), StrCat("'", spec.name, "' is declared twice"));
    }
    ASSIGN_OR_RETURN(std::string type_name,
                     reader.String(entry["datatype"], StrCat(item, ".datatype")));
    std::optional<DataType> type = ParseDataType(type_name);
    if (!type) {
      return reader.Error(
          StrCat(item, ".datatype"),
          StrCat("'", type_name, "' is not a datatype (one of ", AllDataTypeNames(), ")"));
    }
    spec.datatype = *type;
    ASSIGN_OR_RETURN(spec.dims, ParseDims(reader, entry["dims"], StrCat(item, ".dims")));
    if (entry["content"]) {
      ASSIGN_OR_RETURN(std::string content,
                       reader.String(entry["content"], StrCat(item, ".content")));
      if (content == "image") {
        spec.content = TensorContent::kImage;
      } else if (content == "text") {
        spec.content = TensorContent::kText;
      } else {
        return reader.Error(StrCat(item, ".content"),
                            StrCat("'", content, "' is not a content kind (image or text)"));
      }
      if (spec.datatype != DataType::kBytes) {
        return reader.Error(StrCat(item, ".content"),
                            "is for BYTES tensors only (encoded images, UTF-8 text)");
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

absl::StatusOr<std::vector<InstanceGroup>> ParseInstances(const FieldReader& reader,
                                                          const YAML::Node& node,
                                                          int default_count) {
  if (!node) return std::vector<InstanceGroup>{InstanceGroup{.count = default_count}};
  if (!node.IsSequence() || node.size() == 0) {
    return reader.Error("instances", "must be a non-empty list of {count, device}");
  }
  std::vector<InstanceGroup> groups;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string item = StrCat("instances[", i, "]");
    RETURN_IF_ERROR(reader.CheckKeys(node[i], item, {"count", "device"}));
    InstanceGroup group;
    if (node[i]["count"]) {
      ASSIGN_OR_RETURN(int64_t count, reader.Integer(node[i]["count"], item + ".count"));
      if (count < 1 || count > kMaxInstancesPerModel) {
        return reader.Error(item + ".count",
                            StrCat("must be 1..", kMaxInstancesPerModel, ", got ", count));
      }
      group.count = static_cast<int>(count);
    }
    if (node[i]["device"]) {
      ASSIGN_OR_RETURN(std::string text, reader.String(node[i]["device"], item + ".device"));
      absl::StatusOr<Device> device = ParseDevice(text);
      if (!device.ok()) {
        return reader.Error(item + ".device", std::string(device.status().message()));
      }
      group.device = device->ToString();
    }
    // All instances of a model share one copy of its weights, on one device.
    if (!groups.empty() && group.device != groups.front().device) {
      return reader.Error(
          item + ".device",
          StrCat("'", group.device, "' differs from instances[0].device '", groups.front().device,
                 "': the instances of one model run on one device (serve the "
                 "model under a second name for another device)"));
    }
    groups.push_back(std::move(group));
    // Many groups of 64 would still make a thread each: the bound is on the model's total.
    int64_t total = 0;
    for (const InstanceGroup& g : groups) total += g.count;
    if (total > kMaxInstancesPerModel) {
      return reader.Error("instances", StrCat("ask for ", total,
                                              " execution instances in all; a "
                                              "model may have at most ",
                                              kMaxInstancesPerModel));
    }
  }
  return groups;
}

absl::StatusOr<std::map<std::string, std::string>> ParseParameters(const FieldReader& reader,
                                                                   const YAML::Node& node) {
  std::map<std::string, std::string> parameters;
  if (!node || node.IsNull()) return parameters;
  if (!node.IsMap()) return reader.Error("parameters", "must be a mapping of name: value");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (!entry.second.IsScalar()) {
      return reader.Error(StrCat("parameters.", key), "must be a single value");
    }
    parameters[key] = entry.second.as<std::string>();
  }
  return parameters;
}

absl::StatusOr<DynamicBatchingConfig> ParseDynamicBatching(const FieldReader& reader,
                                                           const YAML::Node& node,
                                                           int max_batch_size) {
  DynamicBatchingConfig batching;
  if (!node) {
    batching.enabled = batching.by_default = max_batch_size > 0;
    return batching;
  }
  // A bare `dynamic_batching:` turns batching on with every default.
  if (!node.IsNull()) {
    RETURN_IF_ERROR(reader.CheckKeys(node, "dynamic_batching",
                                     {"enabled", "max_queue_delay_us", "preferred_batch_sizes",
                                      "preserve_ordering", "auto_tune", "latency_slo_ms"}));
    if (node["enabled"]) {
      ASSIGN_OR_RETURN(bool enabled, reader.Bool(node["enabled"], "dynamic_batching.enabled"));
      if (!enabled) {
        if (node.size() > 1) {
          return reader.Error("dynamic_batching", "enabled: false takes no other settings");
        }
        return batching;  // every request runs alone
      }
    }
  }
  if (max_batch_size == 0) {
    return reader.Error("dynamic_batching",
                        "needs max_batch_size > 0 (a model without a batch dimension cannot "
                        "batch)");
  }
  batching.enabled = true;
  if (node["max_queue_delay_us"]) {
    ASSIGN_OR_RETURN(batching.max_queue_delay_us,
                     reader.IntegerIn(node["max_queue_delay_us"],
                                      "dynamic_batching.max_queue_delay_us", 0, 60'000'000));
  }
  if (const YAML::Node sizes = node["preferred_batch_sizes"]) {
    const std::string field = "dynamic_batching.preferred_batch_sizes";
    if (!sizes.IsSequence()) return reader.Error(field, "must be a list of batch sizes");
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSIGN_OR_RETURN(int64_t size,
                       reader.IntegerIn(sizes[i], StrCat(field, "[", i, "]"), 1, max_batch_size));
      if (!batching.preferred_batch_sizes.empty() &&
          size <= batching.preferred_batch_sizes.back()) {
        return reader.Error(field, "must be increasing, without repeats");
      }
      batching.preferred_batch_sizes.push_back(static_cast<int>(size));
    }
  }
  if (node["preserve_ordering"]) {
    ASSIGN_OR_RETURN(batching.preserve_ordering,
                     reader.Bool(node["preserve_ordering"], "dynamic_batching.preserve_ordering"));
  }
  if (node["auto_tune"]) {
    ASSIGN_OR_RETURN(batching.auto_tune,
                     reader.Bool(node["auto_tune"], "dynamic_batching.auto_tune"));
  }
  if (node["latency_slo_ms"]) {
    ASSIGN_OR_RETURN(batching.latency_slo_ms,
                     reader.Number(node["latency_slo_ms"], "dynamic_batching.latency_slo_ms"));
    if (!(batching.latency_slo_ms > 0)) {
      return reader.Error("dynamic_batching.latency_slo_ms", "must be positive");
    }
  }
  return batching;
}

absl::StatusOr<QueueConfig> ParseQueue(const FieldReader& reader, const YAML::Node& node,
                                       const ConfigDefaults& defaults) {
  QueueConfig queue;
  queue.busy_poll_us = defaults.busy_poll_us;
  if (!node || node.IsNull()) return queue;
  RETURN_IF_ERROR(reader.CheckKeys(node, "queue",
                                   {"priority_levels", "default_priority_level", "max_queue_size",
                                    "default_timeout_us", "timeout_status", "busy_poll_us"}));
  if (node["priority_levels"]) {
    ASSIGN_OR_RETURN(int64_t levels,
                     reader.IntegerIn(node["priority_levels"], "queue.priority_levels", 1, 16));
    queue.priority_levels = static_cast<int>(levels);
  }
  if (node["default_priority_level"]) {
    ASSIGN_OR_RETURN(int64_t level,
                     reader.IntegerIn(node["default_priority_level"],
                                      "queue.default_priority_level", 1, queue.priority_levels));
    queue.default_priority_level = static_cast<int>(level);
  }
  if (node["max_queue_size"]) {
    ASSIGN_OR_RETURN(queue.max_queue_size,
                     reader.IntegerIn(node["max_queue_size"], "queue.max_queue_size", 0, 1 << 24));
  }
  if (node["default_timeout_us"]) {
    ASSIGN_OR_RETURN(queue.default_timeout_us,
                     reader.IntegerIn(node["default_timeout_us"], "queue.default_timeout_us", 0,
                                      int64_t{3600} * 1'000'000));
  }
  if (node["timeout_status"]) {
    ASSIGN_OR_RETURN(int64_t status,
                     reader.Integer(node["timeout_status"], "queue.timeout_status"));
    if (status != 504 && status != 429) {
      return reader.Error("queue.timeout_status", StrCat("must be 504 or 429, got ", status));
    }
    queue.timeout_code =
        status == 429 ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kDeadlineExceeded;
  }
  if (node["busy_poll_us"]) {
    ASSIGN_OR_RETURN(queue.busy_poll_us,
                     reader.IntegerIn(node["busy_poll_us"], "queue.busy_poll_us", 0, 10'000));
  }
  return queue;
}

absl::StatusOr<ResponseCacheConfig> ParseResponseCache(const FieldReader& reader,
                                                       const YAML::Node& node) {
  RETURN_IF_ERROR(reader.CheckKeys(node, "response_cache", {"max_bytes", "per_tenant"}));
  if (!node["max_bytes"]) {
    return reader.Error("response_cache.max_bytes",
                        "is required: the bytes of answers the cache may hold (e.g. 67108864)");
  }
  ResponseCacheConfig cache;
  ASSIGN_OR_RETURN(int64_t max_bytes,
                   reader.IntegerIn(node["max_bytes"], "response_cache.max_bytes",
                                    kMinResponseCacheBytes, kMaxResponseCacheBytes));
  cache.max_bytes = static_cast<uint64_t>(max_bytes);
  if (node["per_tenant"]) {
    ASSIGN_OR_RETURN(cache.per_tenant,
                     reader.Bool(node["per_tenant"], "response_cache.per_tenant"));
  }
  return cache;
}

// `backend: pipeline` and its `pipeline:` section (core/config/pipeline_spec_parser.h).
absl::Status ParsePipelineSection(const YAML::Node& root, const FieldReader& reader,
                                  ModelConfig* config) {
  if (BackendKindOf(config->backend) != BackendKind::kPipeline) {
    if (root["pipeline"]) return reader.Error("pipeline", "is for backend: pipeline only");
    return absl::OkStatus();
  }
  // The pipeline never merges requests (its model steps batch in their own queues), and
  // has no engine to tune or set a precision for.
  for (const char* refused : {"dynamic_batching", "parameters", "precision"}) {
    if (root[refused]) {
      return reader.Error(refused,
                          "is not for pipelines (each step model takes its own from its "
                          "config.yaml)");
    }
  }
  if (!root["pipeline"]) return reader.Error("pipeline", "is required for backend: pipeline");
  if (!root["inputs"]) return reader.Error("inputs", "is required for a pipeline");
  if (!root["outputs"]) return reader.Error("outputs", "is required for a pipeline");
  config->dynamic_batching = DynamicBatchingConfig{};
  config->capabilities.pipeline = true;
  ASSIGN_OR_RETURN(config->pipeline,
                   ParsePipelineSpec(reader, root["pipeline"], config->inputs, config->outputs));
  return absl::OkStatus();
}

absl::StatusOr<ModelConfig> ParseValidated(const YAML::Node& root, std::string_view model_name,
                                           const FieldReader& reader,
                                           const ConfigDefaults& defaults) {
  if (!root.IsMap()) return reader.Error("(top level)", "must be a mapping of fields");
  std::set<std::string> known_keys = {
      "backend", "max_batch_size", "inputs",    "outputs",  "instances",      "dynamic_batching",
      "queue",   "parameters",     "precision", "pipeline", "response_cache", "adapters"};
  known_keys.insert(LifecycleConfigKeys().begin(), LifecycleConfigKeys().end());
  RETURN_IF_ERROR(reader.CheckKeys(root, "", known_keys));
  ModelConfig config;
  config.name = std::string(model_name);
  config.max_batch_size = defaults.max_batch_size;
  if (!root["backend"]) return reader.Error("backend", "is required (for example 'torch')");
  ASSIGN_OR_RETURN(config.backend, reader.String(root["backend"], "backend"));
  if (root["max_batch_size"]) {
    ASSIGN_OR_RETURN(int64_t max_batch, reader.Integer(root["max_batch_size"], "max_batch_size"));
    if (max_batch < 0 || max_batch > 1 << 20) {
      return reader.Error("max_batch_size",
                          StrCat("must be 0 (no batch dimension) or a positive batch "
                                 "size, got ",
                                 max_batch));
    }
    config.max_batch_size = static_cast<int>(max_batch);
  }
  const BackendKind kind = BackendKindOf(config.backend);
  if (kind == BackendKind::kLanguageModel && !root["inputs"] && !root["outputs"]) {
    // A language model's tensors are fixed: the prompt in, the generated text out (the names
    // of the KServe generate extension).
    config.inputs = {TensorSpec{"text_input", DataType::kBytes, {1}}};
    config.outputs = {TensorSpec{"text_output", DataType::kBytes, {1}}};
  } else {
    ASSIGN_OR_RETURN(config.inputs, ParseTensorSpecs(reader, root["inputs"], "inputs"));
    ASSIGN_OR_RETURN(config.outputs, ParseTensorSpecs(reader, root["outputs"], "outputs"));
  }
  ASSIGN_OR_RETURN(config.instances,
                   ParseInstances(reader, root["instances"], defaults.instance_count));
  ASSIGN_OR_RETURN(config.dynamic_batching,
                   ParseDynamicBatching(reader, root["dynamic_batching"], config.max_batch_size));
  ASSIGN_OR_RETURN(config.queue, ParseQueue(reader, root["queue"], defaults));
  ASSIGN_OR_RETURN(config.parameters, ParseParameters(reader, root["parameters"]));
  if (kind == BackendKind::kLanguageModel) {
    // A language model's requests wait in its decode loop's queue, never in the scheduler's:
    // this limit would be silently ignored.
    if (root["queue"] && root["queue"]["max_queue_size"]) {
      return reader.Error("queue.max_queue_size",
                          "a language model queues sequences in its decode loop: set "
                          "parameters.max_queue instead (it counts sequences: a request with "
                          "n: 4 takes four places)");
    }
    config.capabilities.generates_text = true;
    const auto embeddings = config.parameters.find("embeddings");
    const auto pooling = config.parameters.find("pooling");
    // A reranker's second context pools by rank: it scores pairs and embeds nothing.
    const bool rank = pooling != config.parameters.end() && pooling->second == "rank";
    const bool second_context =
        embeddings != config.parameters.end() && embeddings->second == "true";
    config.capabilities.embeds = second_context && !rank;
    config.capabilities.reranks = second_context && rank;
  }
  if (root["precision"]) {
    ASSIGN_OR_RETURN(std::string precision, reader.String(root["precision"], "precision"));
    std::optional<Precision> parsed = ParsePrecision(precision);
    if (!parsed) {
      return reader.Error(
          "precision",
          StrCat("'", precision, "' is not a precision (known: ", AllPrecisionNames(), ")"));
    }
    config.precision = *parsed;
  }
  if (root["adapters"] && kind != BackendKind::kLanguageModel) {
    return reader.Error("adapters", "LoRA adapters are for backend: llama only");
  }
  ASSIGN_OR_RETURN(config.adapters, ParseAdapters(reader, root["adapters"]));
  ASSIGN_OR_RETURN(config.lifecycle, ParseLifecycleConfig(root, reader.source()));
  RETURN_IF_ERROR(ParsePipelineSection(root, reader, &config));
  if (root["response_cache"]) {
    if (config.capabilities.generates_text) {
      return reader.Error("response_cache",
                          "a language model's answers are sampled, not looked up: the response "
                          "cache is for models whose outputs follow from their inputs");
    }
    if (config.capabilities.pipeline) {
      // Its answer also depends on its step models' versions, which can change under it.
      return reader.Error("response_cache",
                          "is not for pipelines yet (a step model reloaded with new weights "
                          "would not invalidate the pipeline's answers); give the cache to "
                          "the step models instead");
    }
    ASSIGN_OR_RETURN(config.response_cache, ParseResponseCache(reader, root["response_cache"]));
  }
  return config;
}

}  // namespace

Shape ModelConfig::FullShape(const TensorSpec& spec) const {
  Shape shape;
  if (batched()) shape.push_back(-1);
  shape.insert(shape.end(), spec.dims.begin(), spec.dims.end());
  return shape;
}

Shape ModelConfig::ExampleShape(const TensorSpec& spec, int64_t batch) const {
  Shape shape = FullShape(spec);
  for (int64_t& dim : shape) {
    if (dim == -1) dim = 1;
  }
  if (batched()) shape[0] = batch;
  return shape;
}

absl::StatusOr<std::vector<Tensor>> ModelConfig::ExampleInputs(int64_t batch) const {
  std::vector<Tensor> tensors;
  tensors.reserve(inputs.size());
  for (const TensorSpec& spec : inputs) {
    ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(spec.datatype, ExampleShape(spec, batch)));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

const TensorSpec* ModelConfig::FindInput(std::string_view input_name) const {
  for (const TensorSpec& spec : inputs) {
    if (spec.name == input_name) return &spec;
  }
  return nullptr;
}

int ModelConfig::total_instances() const {
  int total = 0;
  for (const InstanceGroup& group : instances) total += group.count;
  return total > 0 ? total : 1;
}

const AdapterConfig* ModelConfig::FindAdapter(std::string_view adapter_name) const {
  for (const AdapterConfig& adapter : adapters) {
    if (adapter.name == adapter_name) return &adapter;
  }
  return nullptr;
}

const TensorSpec* ModelConfig::FindOutput(std::string_view output_name) const {
  for (const TensorSpec& spec : outputs) {
    if (spec.name == output_name) return &spec;
  }
  return nullptr;
}

absl::StatusOr<ModelConfig> ParseModelConfig(std::string_view yaml_text,
                                             std::string_view model_name, std::string_view source,
                                             const ConfigDefaults& defaults) {
  FieldReader reader(source);
  // yaml-cpp reports errors by throwing; this is the one place they are caught.
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root || root.IsNull()) return reader.Error("(top level)", "the file is empty");
    return ParseValidated(root, model_name, reader, defaults);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        StrCat(source, ": line ", e.mark.line + 1, ": not valid YAML: ", e.msg));
  }
}

}  // namespace inferd
