#include "backends/llama/llama_engine.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>

#include <llama.h>
#include <spdlog/spdlog.h>

#include "backends/llama/llama_log.h"
#include "backends/llama/model_loader.h"
#include "backends/llama/rerank_prompt.h"
#include "backends/llama/sampler_chain.h"
#include "backends/llama/sequence_queue.h"
#include "backends/llama/slot_choice.h"
#include "backends/llama/text_assembler.h"
#include "backends/llama/token_logprobs.h"
#include "common/error_detail.h"
#include "common/openmp_team.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// As an execution instance's (SchedulerOptions::release_engine_threads_after).
constexpr auto kReleaseOpenMpTeamAfter = std::chrono::milliseconds(100);

void Deliver(GenerateRequest& request, GenerationEvent event) {
  if (request.on_event) request.on_event(std::move(event));
}

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

// One queued choice refused (cancelled or expired while it waited, or unloaded): its end.
void FailChoice(GenerateRequest& request, int choice, const absl::Status& status) {
  GenerationEvent event;
  event.choice = choice;
  event.done = true;
  event.status = status;
  Deliver(request, std::move(event));
}

}  // namespace

// An embeddings request, or a rerank request (its inputs are the (query, document) pairs and
// each "embedding" the classifier's outputs for one pair).
struct LlamaEngine::EmbedJob {
  std::unique_ptr<EmbedRequest> request;     // null for a rerank job
  std::unique_ptr<RerankRequest> rerank;     // null for an embeddings job
  std::vector<std::vector<int32_t>> inputs;  // tokens of each input
  EmbedResult result;

  bool cancelled() const {
    return (request ? request->cancelled : rerank->cancelled)->load(std::memory_order_acquire);
  }
  const std::optional<TimePoint>& deadline() const {
    return request ? request->deadline : rerank->deadline;
  }
  // Calls the request's callback (once) with `status`, or the result when it is OK.
  void Answer(absl::Status status) {
    if (request != nullptr) {
      auto callback = std::move(request->on_done);
      if (!callback) return;
      if (status.ok()) return callback(std::move(result));
      return callback(std::move(status));
    }
    auto callback = std::move(rerank->on_done);
    if (!callback) return;
    if (!status.ok()) return callback(std::move(status));
    RerankResult scores;
    scores.prompt_tokens = result.prompt_tokens;
    for (const std::vector<float>& outputs : result.embeddings) {
      scores.scores.push_back(outputs.empty() ? 0.0f : outputs[0]);
    }
    callback(std::move(scores));
  }
};

struct LlamaEngine::Slot {
  int32_t seq = 0;
  std::vector<int32_t> cache;  // the tokens the KV cache holds for this sequence
  uint64_t last_used = 0;      // admission tick
  // Whose requests may reuse `cache` (GenerateRequest::cache_partition).
  std::string partition;
  // The request being served (shared by its choices); null when the slot is free.
  std::shared_ptr<GenerateRequest> request;
  AdapterSet adapters;  // the request's (a KV cache is reused only under the same set)
  int choice = 0;
  std::shared_ptr<const std::vector<int32_t>> prompt;
  size_t prompt_done = 0;  // prompt tokens in the cache
  int64_t cached = 0;      // of them, reused from an earlier request
  int64_t max_tokens = 0;
  TokenSampler sampler;
  std::optional<TextAssembler> text;
  // With GenerateRequest::logprobs: tokens sampled whose text has not been sent yet.
  std::vector<TokenLogprob> logprobs;
  int32_t next = -1;  // sampled and not yet decoded
  int64_t generated = 0;
  int32_t batch_index = -1;
  TimePoint admitted{}, first_token{};
};

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
  return std::unique_ptr<LlamaEngine>(new LlamaEngine(
      loaded.model, loaded.context, options, std::move(loaded.embedder), std::move(adapters)));
}

LlamaEngine::LlamaEngine(llama_model* model, llama_context* context, const LlamaOptions& options,
                         std::unique_ptr<Embedder> embedder, std::vector<Adapter> adapters)
    : model_(model),
      context_(context),
      tokenizer_(llama_model_get_vocab(model)),
      preparer_(model, tokenizer_, options),
      options_(options),
      embedder_(std::move(embedder)),
      decode_threads_(llama_n_threads(context), /*adaptive=*/options.threads == 0),
      prompt_threads_(llama_n_threads_batch(context)),
      sequences_(options.max_queue, options.parallel) {
  weight_bytes_ = llama_model_size(model_);
  kv_bytes_ = KvCacheBytes(model_, context_, options_, embedder_.get());
  adapters_ = std::move(adapters);
  // An adapter's tensors are copied from its file into buffers of their own: the file's size
  // (the tensors and a small header) is what it holds.
  for (const Adapter& adapter : adapters_) {
    std::error_code ec;
    const uintmax_t bytes = std::filesystem::file_size(adapter.path, ec);
    if (adapter.adapter != nullptr && !ec) adapter_bytes_ += bytes;
  }
  // An encoder (BERT and its kin state <arch>.attention.causal false) has no causal attention
  // and no KV cache: decoding with it gives noise, not text.
  char arch[64] = {0}, causal[16] = {0};
  llama_model_meta_val_str(model_, "general.architecture", arch, sizeof(arch));
  generates_ = llama_model_meta_val_str(model_, StrCat(arch, ".attention.causal").c_str(), causal,
                                        sizeof(causal)) <= 0 ||
               std::string_view(causal) != "false";
  for (int i = 0; i < options_.parallel; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->seq = i;
    slots_.push_back(std::move(slot));
  }
  stats_.context_length = options_.context_length;
  stats_.parallel = options_.parallel;
  stats_.kv_cells_total = static_cast<int64_t>(llama_n_ctx(context_));
  thread_ = std::thread([this] { Loop(); });
  prepare_thread_ = std::thread([this] { PrepareLoop(); });
}

LlamaEngine::~LlamaEngine() {
  Shutdown();
  embedder_.reset();  // its context before the model it uses
  llama_free(context_);
  for (Adapter& adapter : adapters_) {
    if (adapter.adapter != nullptr) llama_adapter_lora_free(adapter.adapter);
  }
  llama_model_free(model_);
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
  return preparer_.ApplyChatTemplate(messages);
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
  if (absl::Status checked = preparer_.Check(*request); !checked.ok()) {
    return Fail(*request, checked);
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
    } else if (request->deadline && Clock::now() >= *request->deadline) {
      prepared = absl::DeadlineExceededError(
          "the request's deadline passed before its prompt was processed");
    } else {
      prepared = preparer_.Prepare(*request);
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
          choices.push_back(
              {shared, prepared->prompt, choice, prepared->max_tokens, prepared->grammar});
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
  if (embedder_ == nullptr || embedder_->ranks()) {
    return fail(absl::FailedPreconditionError(
        "this model does not compute embeddings (set parameters.embeddings: true in its "
        "config.yaml, with a pooling other than rank)"));
  }
  if (request->dimensions && *request->dimensions != embedder_->dimensions()) {
    return fail(absl::InvalidArgumentError(
        StrCat("'dimensions' is ", *request->dimensions, ", but this model's embeddings have ",
               embedder_->dimensions(), " (it cannot shorten them)")));
  }
  auto job = std::make_unique<EmbedJob>();
  for (size_t i = 0; i < request->inputs.size(); ++i) {
    std::vector<int32_t> tokens = tokenizer_.Tokenize(request->inputs[i]);
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > embedder_->max_tokens()) {
      return fail(absl::InvalidArgumentError(
          StrCat("input[", i, "] has ", n, " tokens, but this model embeds 1 to ",
                 embedder_->max_tokens(), " tokens per input (parameters.ubatch_size)")));
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
  if (embedder_ == nullptr || !embedder_->ranks()) {
    return fail(absl::FailedPreconditionError(
        "this model is not a reranker (set parameters.embeddings: true and pooling: rank in "
        "its config.yaml)"));
  }
  auto job = std::make_unique<EmbedJob>();
  for (size_t i = 0; i < request->documents.size(); ++i) {
    std::vector<int32_t> tokens =
        RerankPromptTokens(model_, tokenizer_, request->query, request->documents[i]);
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > embedder_->max_tokens()) {
      return fail(WithErrorField(
          absl::InvalidArgumentError(StrCat(
              "the query with documents[", i, "] is ", n, " tokens, but this model scores 1 to ",
              embedder_->max_tokens(), " tokens per pair (parameters.ubatch_size)")),
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
  if (job.deadline() && Clock::now() >= *job.deadline()) {
    return FinishEmbedding(
        absl::DeadlineExceededError("the request's deadline passed while it was embedded"));
  }
  absl::StatusOr<std::vector<float>> vector =
      embedder_->Embed(job.inputs[job.result.embeddings.size()]);
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

void LlamaEngine::Loop() {
  llama_batch batch = llama_batch_init(options_.batch_size, 0, 1);
  // Running sequences and KV cells in use, for the statistics: after every step, and when
  // a step had nothing to run (its last sequences were cancelled) or failed.
  auto publish_occupancy = [this] {
    int64_t active = 0, used = 0;
    for (const auto& slot : slots_) {
      if (slot->request != nullptr) ++active;
      used += static_cast<int64_t>(slot->cache.size());
    }
    MutexLock lock(&mu_);
    stats_.active_sequences = active;
    stats_.kv_cells_used = used;
  };
  while (true) {
    {
      MutexLock lock(&mu_);
      const bool busy = std::any_of(slots_.begin(), slots_.end(),
                                    [](const auto& slot) { return slot->request != nullptr; });
      if (!busy && embedding_ == nullptr) {
        auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !sequences_.empty() || !embed_queue_.empty();
        };
        // Idle for a while: ggml's OpenMP workers for this thread go, so that they do not
        // slow the threads of the models that are running (common/openmp_team.h).
        if (!work_.WaitUntil(&mu_, Clock::now() + kReleaseOpenMpTeamAfter, has_work)) {
          mu_.Unlock();
          ReleaseOpenMpTeam();
          mu_.Lock();
          work_.Wait(&mu_, has_work);
        }
      }
      if (stopping_) break;
    }
    // Occupancy is published as soon as sequences are admitted, not only after the step: a
    // client that has its first token must not read a stale "no active sequence".
    if (Admit()) publish_occupancy();
    if (embedder_ != nullptr) EmbedStep();
    // Builds and runs one step; see the class comment.
    const TimePoint now = Clock::now();
    for (auto& slot : slots_) {
      if (slot->request == nullptr) continue;
      if (slot->request->cancelled->load(std::memory_order_acquire)) {
        Finish(*slot, absl::CancelledError("the client went away"), FinishReason::kNone);
      } else if (slot->request->deadline && now >= *slot->request->deadline) {
        Finish(*slot,
               absl::DeadlineExceededError("the request's deadline passed while it "
                                           "generated"),
               FinishReason::kNone);
      }
    }
    batch.n_tokens = 0;
    auto add = [&batch](int32_t token, int32_t pos, int32_t seq, bool logits) {
      const int32_t i = batch.n_tokens++;
      batch.token[i] = token;
      batch.pos[i] = pos;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = seq;
      batch.logits[i] = logits ? 1 : 0;
      return i;
    };
    // The adapter set this step serves: only sequences decoding with it take part
    // (adapter_batching.h); the others keep their next token for a later step.
    std::vector<const AdapterSet*> ready;
    for (const auto& slot : slots_) {
      if (slot->request != nullptr &&
          (slot->next >= 0 || slot->prompt_done < slot->prompt->size())) {
        ready.push_back(&slot->adapters);
      }
    }
    if (ready.empty()) {
      publish_occupancy();
      continue;
    }
    const AdapterSet step_adapters = NextAdapterSet(ready, last_adapters_);
    auto in_step = [&step_adapters](const Slot& slot) { return slot.adapters == step_adapters; };
    int64_t prompt_tokens = 0;
    for (auto& slot : slots_) {
      if (slot->request == nullptr || slot->next < 0 || !in_step(*slot)) continue;
      slot->batch_index =
          add(slot->next, static_cast<int32_t>(slot->cache.size()), slot->seq, true);
      slot->cache.push_back(slot->next);
      slot->next = -1;
    }
    // Prompt chunks fill the rest of the step, the earliest admitted first.
    std::vector<Slot*> prompting;
    for (auto& slot : slots_) {
      if (slot->request != nullptr && slot->prompt_done < slot->prompt->size() && in_step(*slot)) {
        prompting.push_back(slot.get());
      }
    }
    std::sort(prompting.begin(), prompting.end(),
              [](const Slot* a, const Slot* b) { return a->last_used < b->last_used; });
    for (Slot* slot : prompting) {
      const std::vector<int32_t>& prompt = *slot->prompt;
      while (batch.n_tokens < options_.batch_size && slot->prompt_done < prompt.size()) {
        const bool last = slot->prompt_done + 1 == prompt.size();
        const int32_t i = add(prompt[slot->prompt_done], static_cast<int32_t>(slot->cache.size()),
                              slot->seq, last);
        if (last) slot->batch_index = i;
        slot->cache.push_back(prompt[slot->prompt_done]);
        ++slot->prompt_done;
        ++prompt_tokens;
      }
    }
    if (batch.n_tokens == 0) {
      publish_occupancy();
      continue;
    }

    if (absl::Status applied = ApplyAdapters(step_adapters); !applied.ok()) {
      for (auto& slot : slots_) {
        if (slot->request == nullptr || !in_step(*slot)) continue;
        llama_memory_seq_rm(llama_get_memory(context_), slot->seq, -1, -1);
        slot->cache.clear();
        slot->batch_index = -1;
        Finish(*slot, applied, FinishReason::kNone);
      }
      publish_occupancy();
      continue;
    }
    last_adapters_ = step_adapters;
    // llama.cpp runs a step of one token on n_threads and a larger one on n_threads_batch:
    // both are set to the step's count.
    const bool decode_only = prompt_tokens == 0;
    // With batch_threads automatic too, prompt steps take the count decode steps found
    // fastest: their teams stall beside a busy neighbour in the same way.
    const int threads = decode_only                   ? decode_threads_.Next()
                        : options_.batch_threads == 0 ? decode_threads_.Best()
                                                      : prompt_threads_;
    if (threads != context_threads_) {
      llama_set_n_threads(context_, threads, threads);
      context_threads_ = threads;
    }
    const TimePoint start = Clock::now();
    const int32_t rc = llama_decode(context_, batch);
    const TimePoint end = Clock::now();
    if (decode_only) {
      decode_threads_.Record(threads, std::chrono::duration<double>(end - start).count(),
                             batch.n_tokens);
    }
    if (rc != 0) {
      spdlog::error("llama: decode of {} tokens failed (code {})", batch.n_tokens, rc);
      llama_memory_t memory = llama_get_memory(context_);
      for (auto& slot : slots_) {
        if (slot->request == nullptr) continue;
        llama_memory_seq_rm(memory, slot->seq, -1, -1);
        slot->cache.clear();
        slot->batch_index = -1;
        Finish(*slot, absl::InternalError(StrCat("llama.cpp's decode failed (code ", rc, ")")),
               FinishReason::kNone);
      }
      publish_occupancy();
      continue;
    }
    int64_t sampled = 0;
    for (auto& slot : slots_) {
      if (slot->request == nullptr || slot->batch_index < 0) continue;
      int32_t token = -1;
      try {
        token = slot->sampler.Sample(context_, slot->batch_index);
      } catch (const std::exception& e) {
        // A grammar sampler throws when its grammar has no way on (a client's grammar that no
        // token of this vocabulary can continue): that sequence ends, the others go on.
        slot->batch_index = -1;
        Finish(*slot, absl::InvalidArgumentError(StrCat("the output grammar failed: ", e.what())),
               FinishReason::kNone);
        continue;
      }
      const int32_t row = slot->batch_index;
      slot->batch_index = -1;
      ++sampled;
      if (slot->generated == 0) slot->first_token = end;
      ++slot->generated;
      if (llama_vocab_is_eog(tokenizer_.vocab(), token)) {
        Finish(*slot, absl::OkStatus(), FinishReason::kStop);
        continue;
      }
      if (slot->request->logprobs >= 0) {
        slot->logprobs.push_back(LogprobOf(row, token, slot->request->logprobs));
      }
      GenerationEvent event;
      event.choice = slot->choice;
      event.text = slot->text->Add(tokenizer_.Piece(token));
      event.tokens = 1;
      if (!event.text.empty()) {
        event.logprobs = std::exchange(slot->logprobs, {});
        Deliver(*slot->request, std::move(event));
      }
      if (slot->text->stopped()) {
        Finish(*slot, absl::OkStatus(), FinishReason::kStop);
      } else if (slot->generated >= slot->max_tokens ||
                 static_cast<int64_t>(slot->cache.size()) + 1 > options_.context_length) {
        Finish(*slot, absl::OkStatus(), FinishReason::kLength);
      } else {
        slot->next = token;
      }
    }
    {
      MutexLock lock(&mu_);
      ++stats_.decode_steps;
      stats_.decode_time += end - start;
      stats_.prompt_tokens += static_cast<uint64_t>(prompt_tokens);
    }
    publish_occupancy();
    (void)sampled;
  }
  llama_batch_free(batch);
  // Shutting down: everything still queued or running is answered.
  std::deque<QueuedChoice> left;
  {
    MutexLock lock(&mu_);
    left = sequences_.TakeAll();
    stats_.queued = 0;
  }
  for (QueuedChoice& queued : left) {
    FailChoice(*queued.request, queued.choice, absl::UnavailableError("the model was unloaded"));
  }
  std::deque<std::unique_ptr<EmbedJob>> embeds;
  {
    MutexLock lock(&mu_);
    embeds.swap(embed_queue_);
  }
  if (embedding_ != nullptr) embeds.push_front(std::move(embedding_));
  for (auto& job : embeds) job->Answer(absl::UnavailableError("the model was unloaded"));
  for (auto& slot : slots_) {
    if (slot->request != nullptr) {
      Finish(*slot, absl::UnavailableError("the model was unloaded"), FinishReason::kNone);
    }
  }
}

bool LlamaEngine::Admit() {
  std::vector<std::pair<QueuedChoice, absl::Status>> dropped;
  std::vector<std::pair<size_t, QueuedChoice>> admitted;
  const TimePoint now = Clock::now();
  {
    MutexLock lock(&mu_);
    dropped = sequences_.DropFinished(now);
    std::vector<FreeSlot> free;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = *slots_[i];
      if (slot.request == nullptr) free.push_back({i, slot.cache, slot.partition, slot.last_used});
    }
    admitted = sequences_.Admit(std::move(free));
    stats_.queued = sequences_.waiting();
    stats_.requests_failed += dropped.size();
  }
  for (auto& [queued, why] : dropped) FailChoice(*queued.request, queued.choice, why);
  llama_memory_t memory = llama_get_memory(context_);
  for (auto& [index, queued] : admitted) {
    Slot* slot = slots_[index].get();
    const bool same_partition = slot->partition == queued.request->cache_partition;
    size_t reuse = queued.request->cache_prompt && same_partition
                       ? ReusablePrefix(slot->cache, *queued.prompt)
                       : 0;
    if (reuse < slot->cache.size() &&
        !llama_memory_seq_rm(memory, slot->seq, static_cast<llama_pos>(reuse), -1)) {
      llama_memory_seq_rm(memory, slot->seq, -1, -1);
      reuse = 0;
    }
    slot->cache.resize(reuse);
    slot->partition = queued.request->cache_partition;
    // Checked when the request came in (Generate): adapters never change while loaded.
    slot->adapters = AdapterSetOf(*queued.request).value_or(AdapterSet{});
    slot->request = std::move(queued.request);
    slot->choice = queued.choice;
    slot->prompt = std::move(queued.prompt);
    slot->prompt_done = reuse;
    slot->cached = static_cast<int64_t>(reuse);
    slot->max_tokens = queued.max_tokens;
    SamplingParams sampling = slot->request->sampling;
    if (sampling.seed) *sampling.seed += static_cast<uint32_t>(slot->choice);
    slot->sampler.Configure(sampling, tokenizer_.vocabulary_size(), queued.grammar.get());
    slot->text.emplace(slot->request->stop);
    slot->next = -1;
    slot->generated = 0;
    slot->batch_index = -1;
    slot->admitted = now;
    slot->last_used = ++tick_;
  }
  return !admitted.empty();
}

TokenLogprob LlamaEngine::LogprobOf(int32_t row, int32_t token, int top) const {
  const float* logits = llama_get_logits_ith(context_, row);
  const StepLogprobs step =
      LogprobsOf(std::span<const float>(logits, static_cast<size_t>(tokenizer_.vocabulary_size())),
                 token, top);
  TokenLogprob out{tokenizer_.Piece(token), step.logprob, {}};
  out.top.reserve(step.top.size());
  for (const auto& [id, logprob] : step.top) out.top.emplace_back(tokenizer_.Piece(id), logprob);
  return out;
}

void LlamaEngine::Finish(Slot& slot, absl::Status status, FinishReason reason) {
  GenerationEvent event;
  event.choice = slot.choice;
  event.done = true;
  if (status.ok()) {
    event.text = slot.text->Flush();
    if (reason == FinishReason::kStop) event.stop_sequence = slot.text->stopped_by();
    event.logprobs = std::move(slot.logprobs);
  }
  slot.logprobs.clear();
  event.status = std::move(status);
  event.finish_reason = reason;
  event.usage.prompt_tokens = static_cast<int64_t>(slot.prompt->size());
  event.usage.cached_prompt_tokens = slot.cached;
  event.usage.completion_tokens = slot.generated;
  const TimePoint now = Clock::now();
  event.usage.total = now - slot.request->arrival;
  if (slot.generated > 0)
    event.usage.time_to_first_token = slot.first_token - slot.request->arrival;
  {
    MutexLock lock(&mu_);
    ++stats_.requests;
    if (!event.status.ok()) ++stats_.requests_failed;
    stats_.cached_prompt_tokens += static_cast<uint64_t>(slot.cached);
    stats_.completion_tokens += static_cast<uint64_t>(slot.generated);
    if (slot.generated > 0) {
      stats_.ttft.Add(event.usage.time_to_first_token);
      if (slot.generated > 1) {
        stats_.tpot.Add((now - slot.first_token) / (slot.generated - 1));
      }
    }
  }
  // The request is shared by its choices: the last one to end lets it go (and its callback,
  // which may hold the frontend's reply state).
  std::shared_ptr<GenerateRequest> request = std::move(slot.request);
  slot.prompt.reset();
  slot.sampler.Clear();
  slot.text.reset();
  slot.next = -1;
  slot.batch_index = -1;
  Deliver(*request, std::move(event));
}

}  // namespace inferd
