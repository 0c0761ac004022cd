// What the gRPC service says about models: metadata, config, statistics and the repository
// index, as the same facts the HTTP endpoints give (kserve_handlers.cc, stats_handler.cc).
#ifndef INFERD_FRONTENDS_GRPC_GRPC_MODEL_INFO_H_
#define INFERD_FRONTENDS_GRPC_GRPC_MODEL_INFO_H_

#include <vector>

#include "core/model/served_model.h"
#include "core/repository/model_manager.h"
#include "core/service/inference_path.h"
#include "inference_service.pb.h"

namespace inferd {

// Lists the versions the policy serves, loaded or not (as HTTP's model metadata does).
void FillModelMetadata(const ModelDescription& model, inference::ModelMetadataResponse* out);

void FillModelConfig(const ModelDescription& model, inference::ModelConfig* out);

void FillModelStatistics(const ServedModel& model, inference::ModelStatistics* out);

// Every model, or only the ready ones when `ready_only`.
void FillRepositoryIndex(const std::vector<ModelStatus>& index, bool ready_only,
                         inference::RepositoryIndexResponse* out);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_MODEL_INFO_H_
