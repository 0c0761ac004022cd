// One loaded, ready version of a model: its config, its engine state, its scheduler and its
// statistics.
//
// Requests reach it through a ModelHandle (a shared_ptr), which keeps the version alive for
// the whole request even if the manager stops serving it meanwhile.
// Thread-safety: immutable after construction; Infer and the accessors are thread-safe.
#ifndef INFERD_CORE_MODEL_SERVED_MODEL_H_
#define INFERD_CORE_MODEL_SERVED_MODEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/backend/backend.h"
#include "core/backend/generation.h"
#include "core/backend/infer_request.h"
#include "core/config/model_config.h"
#include "core/model/response_cache.h"
#include "core/scheduling/batch_planner.h"
#include "core/scheduling/batch_tuner.h"
#include "core/scheduling/intra_op_probe.h"
#include "core/scheduling/model_observer.h"
#include "core/scheduling/model_stats.h"
#include "core/scheduling/scheduler.h"

namespace inferd {

class ServedModel {
 public:
  // `tuning` is the auto-tuning table when the model asked for it; `policy` already
  // reflects it. `intra_op` is the thread count chosen at load, and why. `model` may be
  // shared with other versions whose model file is identical. `observer` (optional) is told
  // what happens to the model, for metrics.
  ServedModel(std::shared_ptr<const ModelConfig> config, int64_t version, std::string_view platform,
              std::shared_ptr<BackendModel> model, BatchPolicy policy,
              std::optional<BatchTuning> tuning, IntraOpChoice intra_op = {},
              std::shared_ptr<ModelObserver> observer = nullptr);
  // Finishes queued requests before the engine state is released.
  ~ServedModel();

  const ModelConfig& config() const { return *config_; }
  const std::string& name() const { return config_->name; }
  int64_t version() const { return version_; }
  const std::string& platform() const { return platform_; }
  const ModelStats& stats() const { return stats_; }
  const BatchPolicy& batch_policy() const { return scheduler_.batch_policy(); }
  const std::optional<BatchTuning>& tuning() const { return tuning_; }
  const IntraOpChoice& intra_op() const { return intra_op_; }
  size_t queue_depth() const { return scheduler_.queue_depth(); }
  // Null when the server keeps no metrics.
  ModelObserver* observer() const { return stats_.observer(); }
  // Requests accepted by Infer and not yet answered (queued or executing).
  int64_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  const std::shared_ptr<BackendModel>& backend_model() const { return model_; }
  // Null unless config.yaml asks for a response cache.
  const ResponseCache* response_cache() const { return cache_.get(); }

  // Validates `request` against the config and queues it. Every outcome, errors included,
  // is delivered through request->on_complete.
  void Infer(std::unique_ptr<InferRequest> request);

  // Null unless the model generates text: a BackendModel that also implements
  // GenerativeModel (core/backend/generation.h), as the llama backend's models do.
  GenerativeModel* generative() const { return generative_; }
  // Queues a generation request (the model must be generative()); counted in in_flight()
  // until its last event. Every outcome arrives through request->on_event.
  void Generate(std::unique_ptr<GenerateRequest> request);
  // Queues an embeddings request, counted as Generate's; the outcome arrives through
  // request->on_done (InvalidArgument when the model does not generate text).
  void Embed(std::unique_ptr<EmbedRequest> request);
  // As Embed, for a rerank request.
  void Rerank(std::unique_ptr<RerankRequest> request);

  // Refuses new requests and finishes the queued ones (a generative model's running
  // sequences end with Unavailable).
  void Stop();

 private:
  // Answers `request` from the cache when it holds its inputs' answer (true); otherwise
  // arranges for a successful answer to be kept, and returns false.
  bool AnswerFromCache(InferRequest& request);

  const std::shared_ptr<const ModelConfig> config_;
  const int64_t version_;
  const std::string platform_;
  const std::shared_ptr<BackendModel> model_;
  GenerativeModel* const generative_;  // model_ itself, or null
  const std::optional<BatchTuning> tuning_;
  const IntraOpChoice intra_op_;
  ModelStats stats_;
  const std::unique_ptr<ResponseCache> cache_;  // null: no response_cache in config.yaml
  std::atomic<int64_t> in_flight_{0};
  Scheduler scheduler_;  // declared last: destroyed (stopped) before everything it uses
};

using ModelHandle = std::shared_ptr<ServedModel>;

}  // namespace inferd

#endif  // INFERD_CORE_MODEL_SERVED_MODEL_H_
