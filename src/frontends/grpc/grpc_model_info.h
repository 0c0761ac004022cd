// What the gRPC service says about models: metadata, config, statistics and the repository
// index, as the same facts the HTTP endpoints give (kserve_handlers.cc, stats_handler.cc).
#ifndef INFERD_FRONTENDS_GRPC_GRPC_MODEL_INFO_H_
#define INFERD_FRONTENDS_GRPC_GRPC_MODEL_INFO_H_

#include <vector>

#include "core/repository/model_manager.h"
#include "core/served_model.h"
#include "inference_service.pb.h"

namespace inferd {

// `index` supplies the model's ready versions.
void FillModelMetadata(const ServedModel& model, const std::vector<ModelStatus>& index,
                       inference::ModelMetadataResponse* out);

void FillModelConfig(const ServedModel& model, inference::ModelConfig* out);

void FillModelStatistics(const ServedModel& model, inference::ModelStatistics* out);

// Every model, or only the ready ones when `ready_only`.
void FillRepositoryIndex(const std::vector<ModelStatus>& index, bool ready_only,
                         inference::RepositoryIndexResponse* out);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_MODEL_INFO_H_
