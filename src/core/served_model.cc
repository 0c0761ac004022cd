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
  options.busy_poll = std::chrono::microseconds(config.queue.busy_poll_us);
  return options;
}

}  // namespace

ServedModel::ServedModel(std::shared_ptr<const ModelConfig> config, int64_t version,
                         std::string_view platform, std::shared_ptr<BackendModel> model,
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
  // Counted until answered, so that the memory manager never evicts a model with requests
  // in flight. The scheduler answers every request before this object is destroyed.
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  request->on_complete = [this, done = std::move(request->on_complete)](InferResponse response) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    done(std::move(response));
  };
  scheduler_.Enqueue(std::move(request));
}

void ServedModel::Stop() { scheduler_.Stop(); }

}  // namespace inferd
