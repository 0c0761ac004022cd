#include "core/service/inference_path.h"

#include <algorithm>
#include <utility>

#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/model/request_validator.h"
#include "core/scheduling/batch_tuner.h"
#include "core/service/infer_as_generation.h"

namespace inferd {
namespace {

// Every choice of a request refused before it reached a model hears the refusal.
void RefuseGeneration(GenerateRequest& request, const absl::Status& status) {
  auto on_event = std::move(request.on_event);
  if (!on_event) return;
  for (int choice = 0; choice < std::max(request.n, 1); ++choice) {
    GenerationEvent event;
    event.choice = choice;
    event.done = true;
    event.status = status;
    on_event(std::move(event));
  }
}

// The deadline of a request that asked for `timeout_us` (0: the model's default).
absl::StatusOr<std::optional<TimePoint>> DeadlineFor(const ModelConfig& config, int64_t timeout_us,
                                                     TimePoint arrival) {
  if (timeout_us < 0 || timeout_us > kMaxTimeoutUs) {
    return absl::InvalidArgumentError(StrCat("the timeout must be between 0 and ", kMaxTimeoutUs,
                                             " microseconds, got ", timeout_us));
  }
  if (timeout_us == 0) timeout_us = config.queue.default_timeout_us;
  if (timeout_us == 0) return std::optional<TimePoint>();
  return std::optional<TimePoint>(arrival + std::chrono::microseconds(timeout_us));
}

// How long a load may take for a request with `deadline` (0: no bound), as the acquisition
// takes it.
int64_t LoadTimeoutUs(const std::optional<TimePoint>& deadline) {
  if (!deadline) return 0;
  const auto left =
      std::chrono::duration_cast<std::chrono::microseconds>(*deadline - Clock::now()).count();
  return std::max<int64_t>(left, 1);
}

// The tail every language-model request shares (generate, embed, rerank): its deadline from
// the model's config and the requested timeout, the model acquired within it (a lazy load
// included), then `deliver(model, request)`; a failure on the way goes to `refuse(request,
// status)`.
template <typename Request, typename Refuse, typename Deliver>
void AcquireAndDeliver(ModelManager& models, std::string_view name, std::optional<int64_t> version,
                       const ModelConfig& config, int64_t timeout_us,
                       std::unique_ptr<Request> request,
                       std::function<void(const ModelHandle&)> acquired, Refuse refuse,
                       Deliver deliver) {
  absl::StatusOr<std::optional<TimePoint>> deadline =
      DeadlineFor(config, timeout_us, request->arrival);
  if (!deadline.ok()) return refuse(*request, deadline.status());
  request->deadline = *deadline;
  const int64_t load_timeout_us = LoadTimeoutUs(request->deadline);
  auto pending = std::make_shared<std::unique_ptr<Request>>(std::move(request));
  models.AcquireForInference(name, version, load_timeout_us,
                             [pending, acquired = std::move(acquired), refuse,
                              deliver](absl::StatusOr<ModelHandle> model) {
                               if (!model.ok()) return refuse(**pending, model.status());
                               if (acquired) acquired(*model);
                               // ServedModel counts the request in flight until it is answered;
                               // nothing here holds the handle past this call.
                               deliver(*model, std::move(*pending));
                             });
}

// Embedding and rerank requests hear a refusal through their one callback.
template <typename Request>
void RefuseOnce(Request& request, absl::Status status) {
  if (auto on_done = std::move(request.on_done)) on_done(std::move(status));
}

// Resolves `request.adapters` against `config` (ids to names; every name declared, none twice,
// each scale in bounds) and drops those of scale 0, which change nothing, so that requests
// with equal effects batch together. `adapter`: from "model": "base:adapter".
absl::Status ResolveAdapters(const ModelConfig& config, std::string_view adapter,
                             GenerateRequest& request) {
  if (!adapter.empty()) {
    if (!request.adapters.empty()) {
      return WithErrorField(
          absl::InvalidArgumentError("'lora' cannot be combined with a \"model\" that names an "
                                     "adapter (base:adapter): give one or the other"),
          "lora");
    }
    request.adapters.push_back(
        AdapterUse{std::string(adapter), -1, config.FindAdapter(adapter)->scale});
    return absl::OkStatus();
  }
  std::vector<AdapterUse> kept;
  for (size_t i = 0; i < request.adapters.size(); ++i) {
    AdapterUse& use = request.adapters[i];
    auto refuse = [&](std::string why) {
      return WithErrorField(absl::InvalidArgumentError(StrCat("lora[", i, "]: ", why)), "lora");
    };
    if (use.id >= 0) {
      if (use.id >= static_cast<int64_t>(config.adapters.size())) {
        return refuse(StrCat("id ", use.id, ": model '", config.name, "' has ",
                             config.adapters.size(), " adapters (ids 0..",
                             static_cast<int64_t>(config.adapters.size()) - 1, ")"));
      }
      use.name = config.adapters[static_cast<size_t>(use.id)].name;
    } else if (config.FindAdapter(use.name) == nullptr) {
      std::vector<std::string> names;
      for (const AdapterConfig& declared : config.adapters) names.push_back(declared.name);
      return refuse(StrCat("model '", config.name, "' has no adapter '", use.name,
                           "' (its adapters: ", StrJoin(names, ", "), ")"));
    }
    for (const AdapterUse& earlier : kept) {
      if (earlier.name == use.name)
        return refuse(StrCat("adapter '", use.name, "' is named twice"));
    }
    if (absl::Status valid = CheckAdapterScale(use.scale, StrCat("lora[", i, "].scale"));
        !valid.ok()) {
      return WithErrorField(valid, "lora");
    }
    if (use.scale != 0) kept.push_back(std::move(use));
  }
  request.adapters = std::move(kept);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InferencePath::GenerationTarget> InferencePath::ResolveGenerationModel(
    std::string_view name) const {
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = models_->ConfigOf(name);
  if (config.ok() || !absl::IsNotFound(config.status())) {
    if (!config.ok()) return config.status();
    return GenerationTarget{std::string(name), {}, *std::move(config)};
  }
  const std::optional<AdapterName> split = SplitAdapterName(name);
  if (!split) return config.status();
  absl::StatusOr<std::shared_ptr<const ModelConfig>> base = models_->ConfigOf(split->base);
  if (!base.ok()) return config.status();
  if ((*base)->FindAdapter(split->adapter) == nullptr) {
    std::vector<std::string> names;
    for (const AdapterConfig& adapter : (*base)->adapters) names.push_back(adapter.name);
    return WithErrorReason(
        absl::NotFoundError(
            StrCat("model '", name, "': model '", split->base, "' has no adapter '", split->adapter,
                   "' (its adapters: ", names.empty() ? "none" : StrJoin(names, ", "), ")")),
        ErrorReason::kUnknownModel);
  }
  return GenerationTarget{std::string(split->base), std::string(split->adapter), *std::move(base)};
}

InferencePath::InferencePath(ModelManager* models, std::string default_model)
    : models_(models), default_model_(std::move(default_model)) {}

absl::StatusOr<std::shared_ptr<const ModelConfig>> InferencePath::ConfigFor(
    std::string_view name) const {
  return models_->ConfigOf(name);
}

absl::StatusOr<std::string> InferencePath::DefaultModel() const {
  if (!default_model_.empty()) return default_model_;
  // Servable models: loaded, or loadable on demand (lazy, evicted).
  std::vector<std::string> servable;
  for (const ModelStatus& status : models_->Index()) {
    if (status.state == ModelState::kUnavailable) continue;
    if (servable.empty() || servable.back() != status.name) servable.push_back(status.name);
  }
  if (servable.size() == 1) return servable.front();
  return absl::InvalidArgumentError(
      StrCat("no default model (ready models: ", StrJoin(servable, ", "), ")"));
}

void InferencePath::Submit(std::string_view name, std::optional<int64_t> version,
                           std::unique_ptr<InferRequest> request, InferCallbacks callbacks) {
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = models_->ConfigOf(name);
  if (!config.ok()) return callbacks.done(nullptr, InferResponse{config.status(), {}, 0});
  if ((*config)->capabilities.generates_text) {
    return SubmitGeneration(**config, version, std::move(request), std::move(callbacks));
  }
  // Cheap checks before expensive work: a request whose tensors do not match the model's
  // signature is refused here, before anything is loaded, evicted or queued (a client could
  // otherwise make the server load every lazy model, evicting warm ones, with requests that
  // are refused anyway). The version the request reaches skips the check when its config is
  // this one. A config whose inputs or outputs config.yaml left out is completed from the
  // model file when a version loads (config_completer.h): until then the version checks.
  const bool declared = !(*config)->inputs.empty() && !(*config)->outputs.empty();
  if (absl::Status valid = declared ? ValidateAndOrderInputs(**config, *request) : absl::OkStatus();
      !valid.ok()) {
    // A model that failed to load is reported as such (503 with its reason), whatever the
    // request holds: that is what its client needs to know first.
    if (absl::Status failed = models_->FailedToLoad(name, version); !failed.ok()) {
      return callbacks.done(nullptr, InferResponse{std::move(failed), {}, 0});
    }
    // Counted for the model when a version is loaded (metrics, the access log), as it was
    // when the version itself refused it; nothing is loaded for it.
    absl::StatusOr<ModelHandle> loaded = models_->Acquire(name, version);
    if (loaded.ok() && callbacks.acquired) callbacks.acquired(*loaded);
    return callbacks.done(loaded.ok() ? loaded->get() : nullptr,
                          InferResponse{std::move(valid), {}, 0});
  }
  if (declared) request->validated_for = *config;
  const int64_t timeout_us = request->timeout_us;
  // std::function needs a copyable callable: the request travels in a shared_ptr.
  auto pending = std::make_shared<std::unique_ptr<InferRequest>>(std::move(request));
  models_->AcquireForInference(
      name, version, timeout_us,
      [pending, callbacks = std::move(callbacks)](absl::StatusOr<ModelHandle> model) mutable {
        if (!model.ok()) return callbacks.done(nullptr, InferResponse{model.status(), {}, 0});
        if (callbacks.acquired) callbacks.acquired(*model);
        // The completion holds a plain pointer, not the handle: the last handle must never be
        // released on the model's own execution thread. The version stays alive while it
        // runs: ~ServedModel answers every queued request first.
        ServedModel* served = model->get();
        (*pending)->on_complete = [served,
                                   done = std::move(callbacks.done)](InferResponse response) {
          done(served, std::move(response));
        };
        served->Infer(std::move(*pending));
      });
}

void InferencePath::SubmitGeneration(const ModelConfig& config, std::optional<int64_t> version,
                                     std::unique_ptr<InferRequest> request,
                                     InferCallbacks callbacks) {
  absl::StatusOr<std::unique_ptr<GenerateRequest>> generation =
      GenerationFromInfer(config, *request);
  if (!generation.ok()) return callbacks.done(nullptr, InferResponse{generation.status(), {}, 0});
  // The model that ran it, for `done`: set on the acquiring thread before the request is
  // handed over, read on the decode thread after (the hand-over orders them). Not a handle:
  // the decode thread must never release the last one; the version outlives its requests.
  struct Outcome {
    const ServedModel* model = nullptr;
    std::string text;
  };
  auto outcome = std::make_shared<Outcome>();
  (*generation)->on_event = [outcome, done = std::move(callbacks.done)](GenerationEvent event) {
    outcome->text += event.text;
    if (!event.done) return;
    if (!event.status.ok()) return done(outcome->model, InferResponse{event.status, {}, 0});
    done(outcome->model, InferResponseFromText(outcome->text));
  };
  Generate(config.name, version, request->timeout_us, *std::move(generation),
           [outcome, acquired = std::move(callbacks.acquired)](const ModelHandle& model) {
             outcome->model = model.get();
             if (acquired) acquired(model);
           });
}

void InferencePath::Generate(std::string_view name, std::optional<int64_t> version,
                             int64_t timeout_us, std::unique_ptr<GenerateRequest> request,
                             std::function<void(const ModelHandle&)> acquired) {
  absl::StatusOr<GenerationTarget> target = ResolveGenerationModel(name);
  if (!target.ok()) return RefuseGeneration(*request, target.status());
  const std::shared_ptr<const ModelConfig>& config = target->config;
  if (!config->capabilities.generates_text) {
    return RefuseGeneration(
        *request, absl::InvalidArgumentError(StrCat("model '", name, "' (backend ", config->backend,
                                                    ") does not generate text; use its infer "
                                                    "endpoint")));
  }
  if (absl::Status valid = ResolveAdapters(*config, target->adapter, *request); !valid.ok()) {
    return RefuseGeneration(*request, valid);
  }
  if (absl::Status valid = CheckGenerateRequest(*request); !valid.ok()) {
    return RefuseGeneration(*request, valid);
  }
  AcquireAndDeliver(*models_, target->model, version, *config, timeout_us, std::move(request),
                    std::move(acquired), RefuseGeneration,
                    [](const ModelHandle& model, std::unique_ptr<GenerateRequest> pending) {
                      model->Generate(std::move(pending));
                    });
}

void InferencePath::Embed(std::string_view name, int64_t timeout_us,
                          std::unique_ptr<EmbedRequest> request,
                          std::function<void(const ModelHandle&)> acquired) {
  auto refuse = [&request](absl::Status status) { RefuseOnce(*request, std::move(status)); };
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = models_->ConfigOf(name);
  if (!config.ok()) return refuse(config.status());
  if ((*config)->capabilities.reranks) {
    return refuse(absl::InvalidArgumentError(
        StrCat("model '", name,
               "' is a reranker (parameters.pooling: rank): it scores documents at /v1/rerank "
               "and computes no embeddings")));
  }
  if (!(*config)->capabilities.embeds) {
    return refuse(absl::InvalidArgumentError(
        StrCat("model '", name, "' does not compute embeddings",
               (*config)->capabilities.generates_text
                   ? " (its config.yaml would need parameters.embeddings: true)"
                   : StrCat(" (backend ", (*config)->backend, "); use its infer endpoint"))));
  }
  size_t bytes = 0;
  for (const std::string& input : request->inputs) bytes += input.size();
  if (bytes > kMaxPromptBytes) {
    return refuse(absl::InvalidArgumentError(StrCat(
        "the inputs are ", bytes, " bytes together; at most ", kMaxPromptBytes, " are allowed")));
  }
  AcquireAndDeliver(*models_, name, std::nullopt, **config, timeout_us, std::move(request),
                    std::move(acquired), RefuseOnce<EmbedRequest>,
                    [](const ModelHandle& model, std::unique_ptr<EmbedRequest> pending) {
                      model->Embed(std::move(pending));
                    });
}

void InferencePath::Rerank(std::string_view name, int64_t timeout_us,
                           std::unique_ptr<RerankRequest> request,
                           std::function<void(const ModelHandle&)> acquired) {
  auto refuse = [&request](absl::Status status) { RefuseOnce(*request, std::move(status)); };
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = models_->ConfigOf(name);
  if (!config.ok()) return refuse(config.status());
  if (!(*config)->capabilities.reranks) {
    return refuse(absl::InvalidArgumentError(
        StrCat("model '", name, "' is not a reranker",
               (*config)->capabilities.generates_text
                   ? " (a llama cross-encoder reranker needs parameters.embeddings: true and "
                     "parameters.pooling: rank in its config.yaml)"
                   : StrCat(" (backend ", (*config)->backend, "); use its infer endpoint"))));
  }
  if (request->query.empty() || request->documents.empty() ||
      request->documents.size() > kMaxRerankDocuments) {
    return refuse(absl::InvalidArgumentError(
        StrCat("a rerank request needs a query and 1 to ", kMaxRerankDocuments, " documents")));
  }
  size_t bytes = request->query.size();
  for (const std::string& document : request->documents) bytes += document.size();
  if (bytes > kMaxPromptBytes) {
    return refuse(absl::InvalidArgumentError(StrCat("the query and documents are ", bytes,
                                                    " bytes together; at most ", kMaxPromptBytes,
                                                    " are allowed")));
  }
  AcquireAndDeliver(*models_, name, std::nullopt, **config, timeout_us, std::move(request),
                    std::move(acquired), RefuseOnce<RerankRequest>,
                    [](const ModelHandle& model, std::unique_ptr<RerankRequest> pending) {
                      model->Rerank(std::move(pending));
                    });
}

absl::StatusOr<ModelDescription> InferencePath::Describe(std::string_view name,
                                                         std::optional<int64_t> version) const {
  ASSIGN_OR_RETURN(ModelManager::Description model, models_->Describe(name));
  const std::vector<int64_t>& served = model.served_versions;
  if (version && !std::binary_search(served.begin(), served.end(), *version)) {
    return WithErrorReason(
        absl::NotFoundError(StrCat("model '", name, "' has no version ", *version,
                                   " (served: ", StrJoin(served, ", "), ")")),
        ErrorReason::kUnknownModel);
  }
  ModelDescription description{model.config, std::move(model.platform), served,
                               std::move(model.ready_versions), PolicyFromConfig(*model.config)};
  if (absl::StatusOr<ModelHandle> loaded = models_->Acquire(name, version); loaded.ok()) {
    description.batch_policy = (*loaded)->batch_policy();
  }
  return description;
}

}  // namespace inferd
