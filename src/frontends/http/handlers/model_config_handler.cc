#include "frontends/http/handlers/model_config_handler.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "common/strings.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {
namespace {

// model_config.proto's DataType names (BYTES is TYPE_STRING there).
std::string ConfigDataTypeName(DataType type) {
  if (type == DataType::kBytes) return "TYPE_STRING";
  return StrCat("TYPE_", DataTypeName(type));
}

void WriteTensors(const std::vector<TensorSpec>& specs, bool input, JsonWriter& writer) {
  writer.StartArray();
  for (const TensorSpec& spec : specs) {
    writer.StartObject();
    writer.Key("name");
    WriteString(writer, spec.name);
    writer.Key("data_type");
    WriteString(writer, ConfigDataTypeName(spec.datatype));
    if (input) {
      writer.Key("format");
      writer.String("FORMAT_NONE");
    }
    writer.Key("dims");
    writer.StartArray();
    for (int64_t dim : spec.dims) writer.Int64(dim);
    writer.EndArray();
    writer.Key("is_shape_tensor");
    writer.Bool(false);
    if (input) {
      writer.Key("allow_ragged_batch");
      writer.Bool(false);
      writer.Key("optional");
      writer.Bool(false);
    }
    writer.EndObject();
  }
  writer.EndArray();
}

// "cuda:1" -> 1, "cuda" -> 0; nullopt for the CPU.
std::optional<int> GpuIndex(const std::string& device) {
  if (device == "cuda") return 0;
  if (!device.starts_with("cuda:")) return std::nullopt;
  return std::atoi(device.c_str() + 5);
}

void WriteInstanceGroups(const ModelConfig& config, JsonWriter& writer) {
  writer.StartArray();
  for (size_t i = 0; i < config.instances.size(); ++i) {
    const InstanceGroup& group = config.instances[i];
    const std::optional<int> gpu = GpuIndex(group.device);
    writer.StartObject();
    writer.Key("name");
    WriteString(writer, StrCat(config.name, "_", i));
    writer.Key("kind");
    writer.String(gpu ? "KIND_GPU" : "KIND_CPU");
    writer.Key("count");
    writer.Int(group.count);
    writer.Key("gpus");
    writer.StartArray();
    if (gpu) writer.Int(*gpu);
    writer.EndArray();
    writer.EndObject();
  }
  writer.EndArray();
}

void WriteDynamicBatching(const ModelConfig& config, const BatchPolicy& policy,
                          JsonWriter& writer) {
  writer.StartObject();
  writer.Key("preferred_batch_size");
  writer.StartArray();
  for (int size : policy.preferred_batch_sizes) writer.Int(size);
  writer.EndArray();
  writer.Key("max_queue_delay_microseconds");
  writer.Int64(
      std::chrono::duration_cast<std::chrono::microseconds>(policy.max_queue_delay).count());
  writer.Key("preserve_ordering");
  writer.Bool(config.dynamic_batching.preserve_ordering);
  writer.Key("priority_levels");
  writer.Int(config.queue.priority_levels);
  writer.Key("default_priority_level");
  writer.Int(config.queue.default_priority());
  writer.EndObject();
}

void WriteParameters(const ModelConfig& config, JsonWriter& writer) {
  writer.StartObject();
  for (const auto& [key, value] : config.parameters) {
    writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    writer.StartObject();
    writer.Key("string_value");
    WriteString(writer, value);
    writer.EndObject();
  }
  writer.EndObject();
}

}  // namespace

HttpReply HandleModelConfig(const HandlerContext& ctx, const ModelRef& ref) {
  // Described without loading (as gRPC ModelConfig); a loaded version shows the batching it
  // runs with (auto-tuning may have chosen it).
  absl::StatusOr<ModelDescription> model = ctx.inference->Describe(ref.name, ref.version);
  if (!model.ok()) return ErrorReply(model.status());
  const ModelConfig& config = *model->config;
  const BatchPolicy& policy = model->batch_policy;

  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("name");
  WriteString(writer, config.name);
  writer.Key("platform");
  WriteString(writer, model->platform);
  writer.Key("backend");
  WriteString(writer, config.backend);
  writer.Key("max_batch_size");
  writer.Int(config.max_batch_size);
  writer.Key("input");
  WriteTensors(config.inputs, /*input=*/true, writer);
  writer.Key("output");
  WriteTensors(config.outputs, /*input=*/false, writer);
  if (policy.dynamic) {
    writer.Key("dynamic_batching");
    WriteDynamicBatching(config, policy, writer);
  }
  writer.Key("instance_group");
  WriteInstanceGroups(config, writer);
  writer.Key("parameters");
  WriteParameters(config, writer);
  writer.EndObject();

  HttpReply reply;
  reply.status = 200;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

}  // namespace inferd
