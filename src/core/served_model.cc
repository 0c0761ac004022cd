#include "core/served_model.h"

#include <utility>

#include "common/strings.h"
#include "core/request_validator.h"

namespace inferd {
namespace {

SchedulerOptions MakeSchedulerOptions(const ModelConfig& config, int64_t version,
                                      BatchPolicy policy) {
  SchedulerOptions options;
  options.label = StrCat(config.name, ":", version);
  options.instance_count = config.total_instances();
  options.batch_policy = std::move(policy);
  options.queue = config.queue;
  options.preserve_ordering = config.dynamic_batching.preserve_ordering;
  return options;
}

}  // namespace

ServedModel::ServedModel(std::shared_ptr<const ModelConfig> config, int64_t version,
                         std::string_view platform, std::unique_ptr<BackendModel> model,
                         BatchPolicy policy, std::optional<BatchTuning> tuning,
                         std::shared_ptr<ModelObserver> observer)
    : config_(std::move(config)),
      version_(version),
      platform_(platform),
      model_(std::move(model)),
      tuning_(std::move(tuning)),
      stats_(std::move(observer)),
      scheduler_(MakeSchedulerOptions(*config_, version_, std::move(policy)), config_.get(),
                 model_.get(), &stats_) {}

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
