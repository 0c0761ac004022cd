// One loaded, ready version of a model: its config, its engine state and its scheduler.
//
// Requests reach it through a ModelHandle (a shared_ptr), which keeps the version alive for
// the whole request even if the manager stops serving it meanwhile.
// Thread-safety: immutable after construction; Enqueue is thread-safe.
#ifndef INFERD_CORE_SERVED_MODEL_H_
#define INFERD_CORE_SERVED_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/backend.h"
#include "core/infer_request.h"
#include "core/model_config.h"
#include "core/scheduling/scheduler.h"

namespace inferd {

class ServedModel {
 public:
  ServedModel(std::shared_ptr<const ModelConfig> config, int64_t version, std::string_view platform,
              std::unique_ptr<BackendModel> model);
  // Finishes queued requests before the engine state is released.
  ~ServedModel();

  const ModelConfig& config() const { return *config_; }
  const std::string& name() const { return config_->name; }
  int64_t version() const { return version_; }
  const std::string& platform() const { return platform_; }

  // Validates `request` against the config and queues it. Every outcome, errors included,
  // is delivered through request->on_complete.
  void Infer(std::unique_ptr<InferRequest> request);

  // Refuses new requests and finishes the queued ones.
  void Stop();

 private:
  const std::shared_ptr<const ModelConfig> config_;
  const int64_t version_;
  const std::string platform_;
  const std::unique_ptr<BackendModel> model_;
  Scheduler scheduler_;  // declared last: destroyed (stopped) before model_
};

using ModelHandle = std::shared_ptr<ServedModel>;

}  // namespace inferd

#endif  // INFERD_CORE_SERVED_MODEL_H_
