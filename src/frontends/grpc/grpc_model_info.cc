#include "frontends/grpc/grpc_model_info.h"

#include <string>

#include "common/client_paths.h"

namespace inferd {
namespace {

// Triton's model_config.proto DataType for ours (BYTES is TYPE_STRING there).
inference::DataType ConfigDataType(DataType type) {
  switch (type) {
    case DataType::kBool:
      return inference::TYPE_BOOL;
    case DataType::kUint8:
      return inference::TYPE_UINT8;
    case DataType::kUint16:
      return inference::TYPE_UINT16;
    case DataType::kUint32:
      return inference::TYPE_UINT32;
    case DataType::kUint64:
      return inference::TYPE_UINT64;
    case DataType::kInt8:
      return inference::TYPE_INT8;
    case DataType::kInt16:
      return inference::TYPE_INT16;
    case DataType::kInt32:
      return inference::TYPE_INT32;
    case DataType::kInt64:
      return inference::TYPE_INT64;
    case DataType::kFp16:
      return inference::TYPE_FP16;
    case DataType::kBf16:
      return inference::TYPE_BF16;
    case DataType::kFp32:
      return inference::TYPE_FP32;
    case DataType::kFp64:
      return inference::TYPE_FP64;
    case DataType::kBytes:
      return inference::TYPE_STRING;
  }
  return inference::TYPE_INVALID;
}

void FillTensorMetadata(const ModelConfig& config, const TensorSpec& spec,
                        inference::ModelMetadataResponse::TensorMetadata* out) {
  out->set_name(spec.name);
  out->set_datatype(std::string(DataTypeName(spec.datatype)));
  for (int64_t dim : config.FullShape(spec)) out->add_shape(dim);
}

void FillDuration(const DurationStat& stat, inference::StatisticDuration* out) {
  out->set_count(stat.count);
  out->set_ns(stat.ns);
}

}  // namespace

void FillModelMetadata(const ModelDescription& model, inference::ModelMetadataResponse* out) {
  const ModelConfig& config = *model.config;
  out->set_name(config.name);
  for (int64_t version : model.versions) out->add_versions(std::to_string(version));
  out->set_platform(model.platform);
  for (const TensorSpec& spec : config.inputs) FillTensorMetadata(config, spec, out->add_inputs());
  for (const TensorSpec& spec : config.outputs) {
    FillTensorMetadata(config, spec, out->add_outputs());
  }
}

void FillModelConfig(const ModelDescription& model, inference::ModelConfig* out) {
  const ModelConfig& config = *model.config;
  out->set_name(config.name);
  out->set_platform(model.platform);
  out->set_backend(config.backend);
  out->set_max_batch_size(config.max_batch_size);
  for (const TensorSpec& spec : config.inputs) {
    inference::ModelInput* input = out->add_input();
    input->set_name(spec.name);
    input->set_data_type(ConfigDataType(spec.datatype));
    for (int64_t dim : spec.dims) input->add_dims(dim);
  }
  for (const TensorSpec& spec : config.outputs) {
    inference::ModelOutput* output = out->add_output();
    output->set_name(spec.name);
    output->set_data_type(ConfigDataType(spec.datatype));
    for (int64_t dim : spec.dims) output->add_dims(dim);
  }
  for (size_t i = 0; i < config.instances.size(); ++i) {
    const InstanceGroup& group = config.instances[i];
    inference::ModelInstanceGroup* instances = out->add_instance_group();
    instances->set_name(config.name + "_" + std::to_string(i));
    instances->set_count(group.count);
    instances->set_kind(group.device == "cpu" ? inference::ModelInstanceGroup::KIND_CPU
                                              : inference::ModelInstanceGroup::KIND_GPU);
    if (group.device == "cuda") instances->add_gpus(0);
    if (group.device.starts_with("cuda:")) instances->add_gpus(std::atoi(group.device.c_str() + 5));
  }
  for (const auto& [key, value] : config.parameters) {
    (*out->mutable_parameters())[key].set_string_value(value);
  }
  const BatchPolicy& policy = model.batch_policy;
  if (policy.dynamic) {
    inference::ModelDynamicBatching* batching = out->mutable_dynamic_batching();
    for (int size : policy.preferred_batch_sizes) batching->add_preferred_batch_size(size);
    batching->set_max_queue_delay_microseconds(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(policy.max_queue_delay).count()));
    batching->set_preserve_ordering(config.dynamic_batching.preserve_ordering);
    batching->set_priority_levels(static_cast<uint64_t>(config.queue.priority_levels));
    batching->set_default_priority_level(static_cast<uint64_t>(config.queue.default_priority()));
  }
}

void FillModelStatistics(const ServedModel& model, inference::ModelStatistics* out) {
  const ModelStatsSnapshot stats = model.stats().Snapshot();
  out->set_name(model.name());
  out->set_version(std::to_string(model.version()));
  out->set_last_inference(static_cast<uint64_t>(stats.last_inference_ms));
  out->set_inference_count(stats.inference_count);
  out->set_execution_count(stats.execution_count);
  inference::InferStatistics* infer = out->mutable_inference_stats();
  FillDuration(stats.success, infer->mutable_success());
  FillDuration(stats.fail, infer->mutable_fail());
  FillDuration(stats.queue, infer->mutable_queue());
  FillDuration(stats.compute_input, infer->mutable_compute_input());
  FillDuration(stats.compute_infer, infer->mutable_compute_infer());
  FillDuration(stats.compute_output, infer->mutable_compute_output());
  FillDuration(stats.cache_hit, infer->mutable_cache_hit());
  FillDuration(stats.cache_miss, infer->mutable_cache_miss());
  for (const auto& [size, batch] : stats.batch_stats) {
    inference::InferBatchStatistics* entry = out->add_batch_stats();
    entry->set_batch_size(static_cast<uint64_t>(size));
    FillDuration(batch.compute_input, entry->mutable_compute_input());
    FillDuration(batch.compute_infer, entry->mutable_compute_infer());
    FillDuration(batch.compute_output, entry->mutable_compute_output());
  }
}

void FillRepositoryIndex(const std::vector<ModelStatus>& index, bool ready_only,
                         inference::RepositoryIndexResponse* out) {
  for (const ModelStatus& status : index) {
    if (ready_only && status.state != ModelState::kReady) continue;
    inference::RepositoryIndexResponse::ModelIndex* entry = out->add_models();
    entry->set_name(status.name);
    if (status.version) entry->set_version(std::to_string(*status.version));
    entry->set_state(std::string(ModelStateName(status.state)));
    entry->set_reason(WithoutServerPaths(status.reason));
  }
}

}  // namespace inferd
