// The one inference path every frontend takes. A frontend decodes its protocol into an
// InferRequest and encodes what comes back; everything in between lives here once:
//   - which model: the one named, or the default model when the request names none;
//   - which version: the one named, or the one the traffic rules pick, or the highest ready
//     one (ModelManager::AcquireForInference);
//   - getting it loaded: a lazy, evicted or idle-unloaded model loads on the manager's loader
//     thread, bounded by the request's timeout, never on the caller's thread;
//   - checking it: the inputs against the model's signature, before anything is loaded,
//     evicted or queued;
//   - running it: ServedModel::Infer queues the request with its priority and queue timeout
//     for the dynamic batcher.
// Generation and embeddings take the same door (Generate, Embed): one place checks their
// limits (CheckGenerateRequest), sets their deadline, and acquires the model; a tensor request
// to a model that generates text is served as a generation (core/service/infer_as_generation.h).
// It also answers the metadata questions both protocols ask (Describe), from the same
// records, so that HTTP and gRPC never disagree about a model.
//
// Thread-safety: thread-safe. Nothing here waits for a model or a load, so I/O threads call it.
// Ownership: Submit takes the request; the service owns it until `done` runs.
#ifndef INFERD_CORE_SERVICE_INFERENCE_PATH_H_
#define INFERD_CORE_SERVICE_INFERENCE_PATH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "core/backend/infer_request.h"
#include "core/config/model_config.h"
#include "core/model/infer_callbacks.h"
#include "core/model/served_model.h"
#include "core/pipeline/step_runner.h"
#include "core/repository/model_manager.h"
#include "core/scheduling/batch_planner.h"

namespace inferd {

// A model as metadata endpoints describe it, loaded or not.
struct ModelDescription {
  std::shared_ptr<const ModelConfig> config;
  std::string platform;
  std::vector<int64_t> versions;        // served by the version policy, ascending
  std::vector<int64_t> ready_versions;  // loaded now, ascending
  // The batching policy of the version asked about when it is loaded (auto-tuning may have
  // changed it), else the one its config gives.
  BatchPolicy batch_policy;
};

class InferencePath : public StepRunner {
 public:
  // `models` must outlive the service. `default_model`: where a request that names no model
  // goes (empty: the only servable model, if there is just one).
  explicit InferencePath(ModelManager* models, std::string default_model = {});

  // The config a request for `name` is decoded against, read without loading the model.
  // NotFound: unknown model; Unavailable: its config is unusable. Frontends call this before
  // looking at the body, so an unknown model is reported as such whatever the body holds.
  absl::StatusOr<std::shared_ptr<const ModelConfig>> ConfigFor(std::string_view name) const;

  // What a generation request's "model" names: a model (adapter empty), or "base:adapter", one
  // of the LoRA adapters base's config.yaml declares (core/config/adapter_config.h). A model whose
  // own name has a ':' wins over an adapter of that spelling. NotFound when it is neither,
  // naming the adapter when base exists. Tenants are checked against `model` (base): an
  // adapter follows its base model's rule.
  struct GenerationTarget {
    std::string model;
    std::string adapter;
    std::shared_ptr<const ModelConfig> config;
  };
  absl::StatusOr<GenerationTarget> ResolveGenerationModel(std::string_view name) const;

  // The model a request that names none goes to: the default model, else the only one that is
  // loaded or loadable on demand. InvalidArgument when that does not pick exactly one.
  absl::StatusOr<std::string> DefaultModel() const;
  // The configured default model (--default-model), empty when none was configured.
  const std::string& configured_default_model() const { return default_model_; }

  // Acquires a version of `name` (see the file comment) and queues `request` on it; the
  // request's timeout bounds both the load and the queue. The outcome, errors included, goes
  // to `callbacks.done` exactly once; `request->on_complete` is set here.
  void Submit(std::string_view name, std::optional<int64_t> version,
              std::unique_ptr<InferRequest> request, InferCallbacks callbacks);

  // StepRunner: a pipeline's model step takes the same door as a client's request.
  void Run(std::string_view model, std::optional<int64_t> version,
           std::unique_ptr<InferRequest> request, InferCallbacks callbacks) override {
    Submit(model, version, std::move(request), std::move(callbacks));
  }

  // Checks `request` against the generation limits and `name`'s capability (and its adapters
  // against the config: ResolveGenerationModel, GenerateRequest::adapters) before anything is
  // loaded or queued, sets its deadline from `timeout_us` (0: the model's
  // queue.default_timeout_us; at most kMaxTimeoutUs), acquires a version as Submit does and
  // hands it the request. Every outcome, refusals included, arrives through request->on_event
  // (done once per choice). `acquired`, optional, is told the version first.
  void Generate(std::string_view name, std::optional<int64_t> version, int64_t timeout_us,
                std::unique_ptr<GenerateRequest> request,
                std::function<void(const ModelHandle&)> acquired = nullptr);
  // As Generate, for embeddings: the model must embed (parameters.embeddings: true), which is
  // checked from its config, so a lazy model is not loaded only to refuse. Every outcome
  // arrives through request->on_done.
  void Embed(std::string_view name, int64_t timeout_us, std::unique_ptr<EmbedRequest> request,
             std::function<void(const ModelHandle&)> acquired = nullptr);
  // As Embed, for rerank: the model must be a reranker (parameters.embeddings: true with
  // pooling: rank), checked from its config; the query and documents together at most
  // kMaxPromptBytes, 1..kMaxRerankDocuments documents.
  void Rerank(std::string_view name, int64_t timeout_us, std::unique_ptr<RerankRequest> request,
              std::function<void(const ModelHandle&)> acquired = nullptr);

  // Metadata, without loading anything. NotFound: unknown model, or `version` is not one the
  // policy serves; Unavailable: the config is unusable.
  absl::StatusOr<ModelDescription> Describe(std::string_view name,
                                            std::optional<int64_t> version) const;

 private:
  // A tensor request to a model that generates text (see the file comment).
  void SubmitGeneration(const ModelConfig& config, std::optional<int64_t> version,
                        std::unique_ptr<InferRequest> request, InferCallbacks callbacks);

  ModelManager* const models_;
  const std::string default_model_;
};

}  // namespace inferd

#endif  // INFERD_CORE_SERVICE_INFERENCE_PATH_H_
