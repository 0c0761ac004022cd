#include "backends/pipeline/pipeline_backend.h"

#include <utility>

#include "backends/pipeline/pipeline_compiler.h"
#include "backends/pipeline/pipeline_model.h"
#include "common/status_macros.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<BackendModel>> PipelineBackend::Load(
    const BackendLoadRequest& request) {
  const std::string source = (request.version_dir.parent_path() / "config.yaml").string();
  ASSIGN_OR_RETURN(std::shared_ptr<const CompiledPipeline> compiled,
                   CompilePipeline(*request.config, *ops_, *host_, request.version_dir, source));
  return std::make_unique<PipelineModel>(std::move(compiled), host_);
}

}  // namespace inferd
