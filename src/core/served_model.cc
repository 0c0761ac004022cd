#include "core/served_model.h"

#include <utility>

#include "common/strings.h"
#include "core/request_validator.h"

namespace inferd {
namespace {

int TotalInstances(const ModelConfig& config) {
  int total = 0;
  for (const InstanceGroup& group : config.instances) total += group.count;
  return total > 0 ? total : 1;
}

}  // namespace

ServedModel::ServedModel(std::shared_ptr<const ModelConfig> config, int64_t version,
                         std::string_view platform, std::unique_ptr<BackendModel> model)
    : config_(std::move(config)),
      version_(version),
      platform_(platform),
      model_(std::move(model)),
      scheduler_(StrCat(config_->name, ":", version_), config_.get(), model_.get(),
                 TotalInstances(*config_)) {}

ServedModel::~ServedModel() { scheduler_.Stop(); }

void ServedModel::Infer(std::unique_ptr<InferRequest> request) {
  if (absl::Status valid = ValidateAndOrderInputs(*config_, *request); !valid.ok()) {
    request->on_complete(InferResponse{std::move(valid), {}});
    return;
  }
  scheduler_.Enqueue(std::move(request));
}

void ServedModel::Stop() { scheduler_.Stop(); }

}  // namespace inferd
