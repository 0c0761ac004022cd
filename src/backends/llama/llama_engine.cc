#include "backends/llama/llama_engine.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include <llama.h>
#include <spdlog/spdlog.h>

#include "backends/llama/llama_decode_context.h"
#include "backends/llama/llama_engine_slot.h"
#include "backends/llama/llama_log.h"
#include "backends/llama/model_loader.h"
#include "backends/llama/rerank_prompt.h"
#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// A request refused before its sequences were queued: every choice ends with `status`.
void Fail(GenerateRequest& request, const absl::Status& status) {
  auto callback = std::move(request.on_event);
  request.on_event = nullptr;
  if (!callback) return;
  for (int choice = 0; choice < std::max(request.n, 1); ++choice) {
    GenerationEvent event;
    event.choice = choice;
    event.done = true;
    event.status = status;
    callback(std::move(event));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<LlamaEngine>> LlamaEngine::Create(
    const std::filesystem::path& gguf, const LlamaOptions& options,
    const std::vector<LlamaAdapterFile>& adapter_files) {
  ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(gguf, options));
  std::vector<Adapter> adapters;
  for (const LlamaAdapterFile& file : adapter_files) {
    Adapter adapter{file.name, file.path, nullptr, {}};
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file.path, ec)) {
      adapter.error = "the file does not exist (or is not a regular file)";
    } else {
      // llama.cpp says why an adapter does not load (wrong architecture, shapes of another
      // base model, not a LoRA GGUF) only in its log.
      LlamaErrorCapture capture;
      adapter.adapter = llama_adapter_lora_init(loaded.model, file.path.c_str());
      if (adapter.adapter == nullptr) {
        adapter.error = capture.errors().empty() ? "llama.cpp could not load it" : capture.errors();
      }
    }
    if (adapter.adapter == nullptr) {
      spdlog::warn("llama: adapter '{}' ({}) is unavailable: {}", file.name, file.path.string(),
                   adapter.error);
    }
    adapters.push_back(std::move(adapter));
  }
  ModelParts parts;
  parts.model = loaded.model;
  parts.context = loaded.context;
  parts.tokenizer = std::make_unique<const Tokenizer>(llama_model_get_vocab(loaded.model));
  parts.preparer = std::make_unique<const RequestPreparer>(loaded.model, *parts.tokenizer, options);
  parts.embedder = std::move(loaded.embedder);
  parts.adapters = std::move(adapters);
  std::vector<llama_adapter_lora*> loras;
  for (const Adapter& adapter : parts.adapters) loras.push_back(adapter.adapter);
  auto decoder =
      std::make_unique<LlamaDecodeContext>(loaded.context, *parts.tokenizer, std::move(loras));
  const RequestPreparer* preparer = parts.preparer.get();
  return std::unique_ptr<LlamaEngine>(new LlamaEngine(
      std::move(parts), std::move(decoder),
      [preparer](const GenerateRequest& request) { return preparer->Prepare(request); }, options,
      RealTime()));
}

std::unique_ptr<LlamaEngine> LlamaEngine::CreateWithContext(std::unique_ptr<DecodeContext> context,
                                                            PrepareFunction prepare,
                                                            const LlamaOptions& options,
                                                            const TimeSource* time) {
  return std::unique_ptr<LlamaEngine>(
      new LlamaEngine(ModelParts{}, std::move(context), std::move(prepare), options, time));
}

LlamaEngine::LlamaEngine(ModelParts model, std::unique_ptr<DecodeContext> decoder,
                         PrepareFunction prepare, const LlamaOptions& options,
                         const TimeSource* time)
    : model_(std::move(model)),
      decoder_(std::move(decoder)),
      prepare_(std::move(prepare)),
      options_(options),
      time_(time),
      decode_threads_(decoder_->threads(), /*adaptive=*/options.threads == 0),
      prompt_threads_(decoder_->batch_threads()),
      sequences_(options.max_queue, options.parallel) {
  if (model_.model != nullptr) {
    weight_bytes_ = llama_model_size(model_.model);
    kv_bytes_ = KvCacheBytes(model_.model, model_.context, options_, model_.embedder.get());
    // An adapter's tensors are copied from its file into buffers of their own: the file's
    // size (the tensors and a small header) is what it holds.
    for (const Adapter& adapter : model_.adapters) {
      std::error_code ec;
      const uintmax_t bytes = std::filesystem::file_size(adapter.path, ec);
      if (adapter.adapter != nullptr && !ec) adapter_bytes_ += bytes;
    }
    // An encoder (BERT and its kin state <arch>.attention.causal false) has no causal
    // attention and no KV cache: decoding with it gives noise, not text.
    char arch[64] = {0}, causal[16] = {0};
    llama_model_meta_val_str(model_.model, "general.architecture", arch, sizeof(arch));
    generates_ = llama_model_meta_val_str(model_.model, StrCat(arch, ".attention.causal").c_str(),
                                          causal, sizeof(causal)) <= 0 ||
                 std::string_view(causal) != "false";
  }
  for (int i = 0; i < options_.parallel; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->seq = i;
    slots_.push_back(std::move(slot));
  }
  stats_.context_length = options_.context_length;
  stats_.parallel = options_.parallel;
  stats_.kv_cells_total = decoder_->cells();
  thread_ = std::thread([this] { Loop(); });
  prepare_thread_ = std::thread([this] { PrepareLoop(); });
}

LlamaEngine::~LlamaEngine() {
  Shutdown();
  decoder_.reset();
  model_.embedder.reset();  // its context before the model it uses
  if (model_.context != nullptr) llama_free(model_.context);
  for (Adapter& adapter : model_.adapters) {
    if (adapter.adapter != nullptr) llama_adapter_lora_free(adapter.adapter);
  }
  if (model_.model != nullptr) llama_model_free(model_.model);
}

void LlamaEngine::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  work_.NotifyAll();
  incoming_work_.NotifyAll();
  if (prepare_thread_.joinable()) prepare_thread_.join();
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<std::string> LlamaEngine::ApplyChatTemplate(
    const std::vector<ChatMessage>& messages) const {
  if (model_.preparer == nullptr) {
    return absl::FailedPreconditionError("this engine has no model file, so no chat template");
  }
  return model_.preparer->ApplyChatTemplate(messages);
}

absl::StatusOr<std::string> LlamaEngine::RenderChatPrompt(const GenerateRequest& request) const {
  if (model_.preparer == nullptr) {
    return absl::FailedPreconditionError("this engine has no model file, so no chat template");
  }
  return model_.preparer->RenderChatPrompt(request);
}

void LlamaEngine::Generate(std::unique_ptr<GenerateRequest> request) {
  if (!generates_) {
    return Fail(*request, absl::InvalidArgumentError(
                              "this model's attention is not causal (an encoder such as BERT, "
                              "served for its embeddings or rerank scores): it does not "
                              "generate text"));
  }
  // Cheap checks first, on the caller's thread; rendering and tokenising on the preparation
  // thread (the class comment).
  if (model_.preparer != nullptr) {
    if (absl::Status checked = model_.preparer->Check(*request); !checked.ok()) {
      return Fail(*request, checked);
    }
  }
  absl::StatusOr<AdapterSet> adapters = AdapterSetOf(*request);
  if (!adapters.ok()) return Fail(*request, adapters.status());
  if (!adapters->empty()) {
    // A KV cache computed through one adapter set is not the prompt's under another: prefixes
    // are reused only within one set (as llama.cpp's server clears a slot's cache when its
    // adapters change).
    request->cache_partition += "\x1f";
    for (const AdapterWeight& weight : *adapters) {
      request->cache_partition += StrCat(weight.index, "*", weight.scale, ";");
    }
  }
  const int n = request->n;
  absl::Status refused;
  {
    MutexLock lock(&mu_);
    if (stopping_) {
      refused = absl::UnavailableError("the model is shutting down");
    } else if (refused = sequences_.Reserve(n); !refused.ok()) {
      ++stats_.requests_failed;
    } else {
      incoming_.push_back(std::move(request));
      stats_.queued = sequences_.waiting();
    }
  }
  if (!refused.ok()) return Fail(*request, refused);
  incoming_work_.NotifyOne();
}

void LlamaEngine::PrepareLoop() {
  while (true) {
    std::unique_ptr<GenerateRequest> request;
    {
      MutexLock lock(&mu_);
      incoming_work_.Wait(&mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !incoming_.empty();
      });
      if (stopping_) break;
      request = std::move(incoming_.front());
      incoming_.pop_front();
    }
    absl::StatusOr<PreparedRequest> prepared;
    if (request->cancelled->load(std::memory_order_acquire)) {
      prepared = absl::CancelledError("the client went away");
    } else if (request->deadline && time_->Now() >= *request->deadline) {
      prepared = absl::DeadlineExceededError(
          "the request's deadline passed before its prompt was processed");
    } else {
      prepared = prepare_(*request);
    }
    const int n = request->n;
    absl::Status refused = prepared.status();
    {
      MutexLock lock(&mu_);
      if (refused.ok() && stopping_) refused = absl::UnavailableError("the model was unloaded");
      if (refused.ok()) {
        std::shared_ptr<GenerateRequest> shared = std::move(request);
        std::vector<QueuedChoice> choices;
        for (int choice = 0; choice < n; ++choice) {
          choices.push_back({shared, prepared->prompt, choice, prepared->max_tokens,
                             prepared->grammar, prepared->tool_prompt});
        }
        sequences_.Release(n, std::move(choices));
      } else {
        sequences_.Release(n);
        ++stats_.requests_failed;
      }
      stats_.queued = sequences_.waiting();
    }
    if (!refused.ok()) {
      Fail(*request, refused);
      continue;
    }
    work_.NotifyOne();
  }
  // Shutting down: what waits for preparation is answered here.
  std::deque<std::unique_ptr<GenerateRequest>> left;
  {
    MutexLock lock(&mu_);
    left.swap(incoming_);
    for (const auto& request : left) sequences_.Release(request->n);
  }
  for (auto& request : left) Fail(*request, absl::UnavailableError("the model was unloaded"));
}

void LlamaEngine::Embed(std::unique_ptr<EmbedRequest> request) {
  auto fail = [&request](absl::Status status) {
    auto callback = std::move(request->on_done);
    if (callback) callback(std::move(status));
  };
  if (model_.embedder == nullptr || model_.embedder->ranks()) {
    return fail(absl::FailedPreconditionError(
        "this model does not compute embeddings (set parameters.embeddings: true in its "
        "config.yaml, with a pooling other than rank)"));
  }
  if (request->dimensions && *request->dimensions != model_.embedder->dimensions()) {
    return fail(absl::InvalidArgumentError(
        StrCat("'dimensions' is ", *request->dimensions, ", but this model's embeddings have ",
               model_.embedder->dimensions(), " (it cannot shorten them)")));
  }
  auto job = std::make_unique<EmbedJob>();
  for (size_t i = 0; i < request->inputs.size(); ++i) {
    std::vector<int32_t> tokens = model_.tokenizer->Tokenize(request->inputs[i]);
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > model_.embedder->max_tokens()) {
      return fail(absl::InvalidArgumentError(
          StrCat("input[", i, "] has ", n, " tokens, but this model embeds 1 to ",
                 model_.embedder->max_tokens(), " tokens per input (parameters.ubatch_size)")));
    }
    job->result.prompt_tokens += n;
    job->inputs.push_back(std::move(tokens));
  }
  job->request = std::move(request);
  QueueEmbedJob(std::move(job));
}

void LlamaEngine::Rerank(std::unique_ptr<RerankRequest> request) {
  auto fail = [&request](absl::Status status) {
    auto callback = std::move(request->on_done);
    if (callback) callback(std::move(status));
  };
  if (model_.embedder == nullptr || !model_.embedder->ranks()) {
    return fail(absl::FailedPreconditionError(
        "this model is not a reranker (set parameters.embeddings: true and pooling: rank in "
        "its config.yaml)"));
  }
  auto job = std::make_unique<EmbedJob>();
  for (size_t i = 0; i < request->documents.size(); ++i) {
    std::vector<int32_t> tokens =
        RerankPromptTokens(model_.model, *model_.tokenizer, request->query, request->documents[i]);
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > model_.embedder->max_tokens()) {
      return fail(WithErrorField(
          absl::InvalidArgumentError(StrCat(
              "the query with documents[", i, "] is ", n, " tokens, but this model scores 1 to ",
              model_.embedder->max_tokens(), " tokens per pair (parameters.ubatch_size)")),
          "documents"));
    }
    job->result.prompt_tokens += n;
    job->inputs.push_back(std::move(tokens));
  }
  job->rerank = std::move(request);
  QueueEmbedJob(std::move(job));
}

void LlamaEngine::QueueEmbedJob(std::unique_ptr<EmbedJob> job) {
  absl::Status refused;
  {
    MutexLock lock(&mu_);
    const size_t waiting = static_cast<size_t>(sequences_.waiting()) + embed_queue_.size();
    if (stopping_) {
      refused = absl::UnavailableError("the model is shutting down");
    } else if (static_cast<int64_t>(waiting) >= options_.max_queue) {
      ++stats_.requests_failed;
      refused = absl::ResourceExhaustedError(
          StrCat("the model's queue is full: ", waiting, " requests wait (parameters.max_queue)"));
    } else {
      embed_queue_.push_back(std::move(job));
    }
  }
  if (!refused.ok()) return job->Answer(std::move(refused));
  work_.NotifyOne();
}

void LlamaEngine::EmbedStep() {
  if (embedding_ == nullptr) {
    MutexLock lock(&mu_);
    if (embed_queue_.empty()) return;
    embedding_ = std::move(embed_queue_.front());
    embed_queue_.pop_front();
  }
  EmbedJob& job = *embedding_;
  if (job.cancelled()) return FinishEmbedding(absl::CancelledError("the client went away"));
  if (job.deadline() && time_->Now() >= *job.deadline()) {
    return FinishEmbedding(
        absl::DeadlineExceededError("the request's deadline passed while it was embedded"));
  }
  absl::StatusOr<std::vector<float>> vector =
      model_.embedder->Embed(job.inputs[job.result.embeddings.size()]);
  if (!vector.ok()) return FinishEmbedding(vector.status());
  job.result.embeddings.push_back(*std::move(vector));
  if (job.result.embeddings.size() == job.inputs.size()) FinishEmbedding(absl::OkStatus());
}

void LlamaEngine::FinishEmbedding(absl::Status status) {
  std::unique_ptr<EmbedJob> job = std::move(embedding_);
  {
    MutexLock lock(&mu_);
    const bool rerank = job->rerank != nullptr;
    ++(rerank ? stats_.rerank_requests : stats_.embedding_requests);
    if (status.ok()) {
      (rerank ? stats_.rerank_tokens : stats_.embedding_tokens) +=
          static_cast<uint64_t>(job->result.prompt_tokens);
    } else {
      ++stats_.requests_failed;
    }
  }
  job->Answer(std::move(status));
}

GenerationStats LlamaEngine::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace inferd
