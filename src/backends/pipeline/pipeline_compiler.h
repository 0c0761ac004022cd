// Turns a pipeline's parsed spec into a CompiledPipeline at load: instantiates its ops from
// the OpRegistry (unknown ops and bad params name pipeline.steps[i]...), checks each model
// step against the repository's config of that model (unknown, generative, nested pipeline,
// port names, batch size) and, between every producer and consumer, datatypes and shapes
// (dims without the batch dimension, -1 matching anything). Heavy ops may read only pipeline
// inputs: they run on the pipeline's own threads before any model step.
#ifndef INFERD_BACKENDS_PIPELINE_PIPELINE_COMPILER_H_
#define INFERD_BACKENDS_PIPELINE_PIPELINE_COMPILER_H_

#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "backends/pipeline/pipeline_host.h"
#include "core/config/model_config.h"
#include "core/pipeline/compiled_pipeline.h"
#include "core/pipeline/op_registry.h"

namespace inferd {

// `config.pipeline` must be set. `source` names config.yaml in errors.
absl::StatusOr<std::shared_ptr<const CompiledPipeline>> CompilePipeline(
    const ModelConfig& config, const OpRegistry& ops, const ConfigLookup& models,
    const std::filesystem::path& version_dir, std::string_view source);

}  // namespace inferd

#endif  // INFERD_BACKENDS_PIPELINE_PIPELINE_COMPILER_H_
