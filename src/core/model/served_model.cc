#include "core/model/served_model.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "common/cores.h"
#include "common/strings.h"
#include "core/model/request_validator.h"

namespace inferd {
namespace {

// Stretching an idle instance's poll to a client's round trip (PollBudget) spins a core for
// up to this long per request, so it is done only where the model's own threads leave a
// core free: one intra-op thread per instance, fewer instances than cores. Beside a
// two-thread forward pass on two cores a spinning thread takes a core that pass needs (as
// the HTTP I/O threads' polls did: docs/scheduling.md, "Busy polling").
constexpr auto kStretchedPollCeiling = std::chrono::milliseconds(1);

SchedulerOptions MakeSchedulerOptions(const ModelConfig& config, int64_t version,
                                      const BackendModel& model, BatchPolicy policy) {
  SchedulerOptions options;
  options.label = StrCat(config.name, ":", version);
  options.instance_count = config.total_instances();
  options.batch_policy = std::move(policy);
  options.queue = config.queue;
  options.preserve_ordering = config.dynamic_batching.preserve_ordering;
  options.busy_poll = std::chrono::microseconds(config.queue.busy_poll_us);
  if (model.intra_op_threads() == 1 && options.instance_count < CoresAvailable()) {
    options.busy_poll_ceiling = kStretchedPollCeiling;
  }
  return options;
}

}  // namespace

ServedModel::ServedModel(std::shared_ptr<const ModelConfig> config, int64_t version,
                         std::string_view platform, std::shared_ptr<BackendModel> model,
                         BatchPolicy policy, std::optional<BatchTuning> tuning,
                         IntraOpChoice intra_op, std::shared_ptr<ModelObserver> observer)
    : config_(std::move(config)),
      version_(version),
      platform_(platform),
      model_(std::move(model)),
      generative_(dynamic_cast<GenerativeModel*>(model_.get())),
      tuning_(std::move(tuning)),
      intra_op_(std::move(intra_op)),
      stats_(std::move(observer)),
      cache_(config_->response_cache.enabled()
                 ? std::make_unique<ResponseCache>(config_->response_cache.max_bytes)
                 : nullptr),
      scheduler_(MakeSchedulerOptions(*config_, version_, *model_, std::move(policy)),
                 config_.get(), model_.get(), &stats_) {}

ServedModel::~ServedModel() {
  if (GenerativeModel* generator = generative_) {
    // The last user of the engine ends its sequences now (they get Unavailable). When an
    // identical file's other version shares the engine, this version's requests run on to
    // their end instead: their callbacks refer to this object.
    if (model_.use_count() == 1) generator->Shutdown();
    while (in_flight_.load(std::memory_order_acquire) > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  scheduler_.Stop();
}

void ServedModel::Infer(std::unique_ptr<InferRequest> request) {
  if (request->validated_for != config_) {
    if (absl::Status valid = ValidateAndOrderInputs(*config_, *request); !valid.ok()) {
      request->on_complete(InferResponse{std::move(valid), {}});
      return;
    }
  }
  if (cache_ && AnswerFromCache(*request)) return;
  // Counted until answered, so that the memory manager never evicts a model with requests
  // in flight. The scheduler answers every request before this object is destroyed.
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  request->on_complete = [this, done = std::move(request->on_complete)](InferResponse response) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    done(std::move(response));
  };
  scheduler_.Enqueue(std::move(request));
}

bool ServedModel::AnswerFromCache(InferRequest& request) {
  const TimePoint start = Clock::now();
  const std::string_view tenant =
      config_->response_cache.per_tenant ? std::string_view(request.tenant) : std::string_view();
  const ResponseCache::Key key = ResponseCache::KeyFor(config_->name, version_, tenant, request);
  if (std::optional<std::vector<NamedTensor>> outputs = cache_->Lookup(key)) {
    stats_.RecordCacheHit(Clock::now() - start);
    request.on_complete(InferResponse{absl::OkStatus(), *std::move(outputs), 0});
    return true;
  }
  const Duration lookup = Clock::now() - start;
  // Runs on the execution thread that answered: the insertion copies the outputs (the cache
  // keeps no view into an engine's or a request's buffers).
  request.on_complete = [this, key, lookup,
                         done = std::move(request.on_complete)](InferResponse response) {
    const TimePoint insert_start = Clock::now();
    if (response.status.ok()) cache_->Insert(key, response.outputs);
    stats_.RecordCacheMiss(lookup + (Clock::now() - insert_start));
    done(std::move(response));
  };
  return false;
}

void ServedModel::Generate(std::unique_ptr<GenerateRequest> request) {
  GenerativeModel* generator = generative_;
  const int choices = std::max(request->n, 1);
  if (generator == nullptr) {
    const absl::Status refused = absl::InvalidArgumentError(
        StrCat("model '", config_->name, "' does not generate text (backend ", config_->backend,
               "); use its infer endpoint"));
    for (int choice = 0; choice < choices; ++choice) {
      GenerationEvent event;
      event.choice = choice;
      event.done = true;
      event.status = refused;
      request->on_event(std::move(event));
    }
    return;
  }
  // Each choice is in flight until its last event.
  in_flight_.fetch_add(choices, std::memory_order_acq_rel);
  request->on_event = [this, done = std::move(request->on_event)](GenerationEvent event) {
    const bool last = event.done;
    done(std::move(event));
    if (last) in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  };
  generator->Generate(std::move(request));
}

void ServedModel::Embed(std::unique_ptr<EmbedRequest> request) {
  GenerativeModel* generator = generative_;
  if (generator == nullptr) {
    request->on_done(absl::InvalidArgumentError(
        StrCat("model '", config_->name, "' (backend ", config_->backend,
               ") does not compute embeddings; use its infer endpoint")));
    return;
  }
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  request->on_done = [this,
                      done = std::move(request->on_done)](absl::StatusOr<EmbedResult> result) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    done(std::move(result));
  };
  generator->Embed(std::move(request));
}

void ServedModel::Rerank(std::unique_ptr<RerankRequest> request) {
  GenerativeModel* generator = generative_;
  if (generator == nullptr) {
    request->on_done(
        absl::InvalidArgumentError(StrCat("model '", config_->name, "' (backend ", config_->backend,
                                          ") is not a reranker; use its infer endpoint")));
    return;
  }
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  request->on_done = [this,
                      done = std::move(request->on_done)](absl::StatusOr<RerankResult> result) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    done(std::move(result));
  };
  generator->Rerank(std::move(request));
}

void ServedModel::Stop() {
  if (GenerativeModel* generator = generative_) generator->Shutdown();
  scheduler_.Stop();
}

}  // namespace inferd
