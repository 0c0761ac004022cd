#include "core/config/backend_kind.h"

namespace inferd {

BackendKind BackendKindOf(std::string_view backend) {
  if (backend == "llama") return BackendKind::kLanguageModel;
  if (backend == "pipeline") return BackendKind::kPipeline;
  return BackendKind::kTensor;
}

}  // namespace inferd
