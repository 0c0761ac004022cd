// LlamaEngine's decode loop, in its steps (the class comment): wait for work, admit, end the
// cancelled and expired, build the batch, decode, sample and deliver. Every llama.cpp call
// goes through decoder_ (decode_context.h) and every reading of the time through time_, so
// llama_engine_test.cc runs these steps without a model.
#include <algorithm>
#include <chrono>
#include <exception>
#include <span>
#include <utility>

#include <spdlog/spdlog.h>

#include "backends/llama/llama_engine.h"
#include "backends/llama/llama_engine_slot.h"
#include "backends/llama/slot_choice.h"
#include "backends/llama/token_logprobs.h"
#include "common/openmp_team.h"
#include "common/strings.h"

namespace inferd {
namespace {

// As an execution instance's (SchedulerOptions::release_engine_threads_after).
constexpr auto kReleaseOpenMpTeamAfter = std::chrono::milliseconds(100);

void Deliver(GenerateRequest& request, GenerationEvent event) {
  if (request.on_event) request.on_event(std::move(event));
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

void LlamaEngine::Loop() {
  DecodeBatch batch(options_.batch_size);
  while (WaitForWork()) {
    // Occupancy is published as soon as sequences are admitted, not only after the step: a
    // client that has its first token must not read a stale "no active sequence".
    if (Admit()) PublishOccupancy();
    if (model_.embedder != nullptr) EmbedStep();
    EndCancelledAndExpired();
    const std::optional<StepPlan> plan = BuildBatch(batch);
    if (plan && DecodeStep(batch, *plan)) SampleAndDeliver();
    // Also when a step had nothing to run (its last sequences were cancelled) or failed.
    PublishOccupancy();
  }
  AnswerAllUnloaded();
}

bool LlamaEngine::WaitForWork() {
  MutexLock lock(&mu_);
  const bool busy =
      std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) { return slot->running(); });
  if (!busy && embedding_ == nullptr) {
    auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || !sequences_.empty() || !embed_queue_.empty();
    };
    // Idle for a while: ggml's OpenMP workers for this thread go, so that they do not slow
    // the threads of the models that are running (common/openmp_team.h). Real time: it is
    // the workers' real idleness that matters, whatever time_ says.
    if (!work_.WaitUntil(&mu_, Clock::now() + kReleaseOpenMpTeamAfter, has_work)) {
      mu_.Unlock();
      ReleaseOpenMpTeam();
      mu_.Lock();
      work_.Wait(&mu_, has_work);
    }
  }
  return !stopping_;
}

bool LlamaEngine::Admit() {
  std::vector<std::pair<QueuedChoice, absl::Status>> dropped;
  std::vector<std::pair<size_t, QueuedChoice>> admitted;
  const TimePoint now = time_->Now();
  {
    MutexLock lock(&mu_);
    dropped = sequences_.DropFinished(now);
    std::vector<FreeSlot> free;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = *slots_[i];
      if (!slot.running()) free.push_back({i, slot.cache, slot.partition, slot.last_used});
    }
    admitted = sequences_.Admit(std::move(free));
    stats_.queued = sequences_.waiting();
    stats_.requests_failed += dropped.size();
  }
  for (auto& [queued, why] : dropped) FailChoice(*queued.request, queued.choice, why);
  for (auto& [index, queued] : admitted) {
    Slot* slot = slots_[index].get();
    const bool same_partition = slot->partition == queued.request->cache_partition;
    size_t reuse = queued.request->cache_prompt && same_partition
                       ? ReusablePrefix(slot->cache, *queued.prompt)
                       : 0;
    if (reuse < slot->cache.size() &&
        !decoder_->RemoveCells(slot->seq, static_cast<int32_t>(reuse))) {
      decoder_->RemoveCells(slot->seq, -1);
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
    slot->sampler.Configure(sampling, decoder_->vocabulary_size(), queued.grammar.get());
    slot->tool_prompt = std::move(queued.tool_prompt);
    std::vector<std::string> stops = slot->request->stop;
    if (slot->tool_prompt != nullptr) {
      stops.insert(stops.end(), slot->tool_prompt->stops.begin(), slot->tool_prompt->stops.end());
    }
    slot->text.emplace(std::move(stops));
    slot->next = -1;
    slot->generated = 0;
    slot->batch_index = -1;
    slot->admitted = now;
    slot->last_used = ++tick_;
  }
  return !admitted.empty();
}

void LlamaEngine::EndCancelledAndExpired() {
  const TimePoint now = time_->Now();
  for (auto& slot : slots_) {
    if (!slot->running()) continue;
    if (slot->request->cancelled->load(std::memory_order_acquire)) {
      Finish(*slot, absl::CancelledError("the client went away"), FinishReason::kNone);
    } else if (slot->request->deadline && now >= *slot->request->deadline) {
      Finish(*slot, absl::DeadlineExceededError("the request's deadline passed while it generated"),
             FinishReason::kNone);
    }
  }
}

std::optional<LlamaEngine::StepPlan> LlamaEngine::BuildBatch(DecodeBatch& batch) {
  batch.Clear();
  // The adapter set this step serves: only sequences decoding with it take part
  // (adapter_batching.h); the others keep their next token for a later step.
  std::vector<const AdapterSet*> ready;
  for (const auto& slot : slots_) {
    if (slot->running() && (slot->next >= 0 || slot->prompting())) ready.push_back(&slot->adapters);
  }
  if (ready.empty()) return std::nullopt;
  StepPlan plan{NextAdapterSet(ready, last_adapters_), 0};
  // First the generating sequences' next tokens.
  for (auto& slot : slots_) {
    if (!slot->running() || slot->next < 0 || slot->adapters != plan.adapters) continue;
    slot->batch_index =
        batch.Add(slot->next, static_cast<int32_t>(slot->cache.size()), slot->seq, true);
    slot->cache.push_back(slot->next);
    slot->next = -1;
  }
  // Prompt chunks fill the rest of the step, the earliest admitted first; a prompt's last
  // token wants logits (its first sampled token follows it).
  std::vector<Slot*> prompting;
  for (auto& slot : slots_) {
    if (slot->running() && slot->prompting() && slot->adapters == plan.adapters) {
      prompting.push_back(slot.get());
    }
  }
  std::sort(prompting.begin(), prompting.end(),
            [](const Slot* a, const Slot* b) { return a->last_used < b->last_used; });
  for (Slot* slot : prompting) {
    const std::vector<int32_t>& prompt = *slot->prompt;
    while (batch.size() < batch.capacity() && slot->prompting()) {
      const bool last = slot->prompt_done + 1 == prompt.size();
      const int32_t row = batch.Add(prompt[slot->prompt_done],
                                    static_cast<int32_t>(slot->cache.size()), slot->seq, last);
      if (last) slot->batch_index = row;
      slot->cache.push_back(prompt[slot->prompt_done]);
      ++slot->prompt_done;
      ++plan.prompt_tokens;
    }
  }
  if (batch.empty()) return std::nullopt;
  return plan;
}

bool LlamaEngine::DecodeStep(const DecodeBatch& batch, const StepPlan& plan) {
  if (absl::Status applied = ApplyAdapters(plan.adapters); !applied.ok()) {
    for (auto& slot : slots_) {
      if (slot->running() && slot->adapters == plan.adapters) Abandon(*slot, applied);
    }
    return false;
  }
  last_adapters_ = plan.adapters;
  // llama.cpp runs a step of one token on n_threads and a larger one on n_threads_batch:
  // both are set to the step's count.
  const bool decode_only = plan.prompt_tokens == 0;
  // With batch_threads automatic too, prompt steps take the count decode steps found
  // fastest: their teams stall beside a busy neighbour in the same way.
  const int threads = decode_only                   ? decode_threads_.Next()
                      : options_.batch_threads == 0 ? decode_threads_.Best()
                                                    : prompt_threads_;
  if (threads != context_threads_) {
    decoder_->SetThreads(threads);
    context_threads_ = threads;
  }
  const TimePoint start = time_->Now();
  const int32_t rc = decoder_->Decode(batch);
  step_end_ = time_->Now();
  if (decode_only) {
    decode_threads_.Record(threads, std::chrono::duration<double>(step_end_ - start).count(),
                           batch.size());
  }
  if (rc != 0) {
    spdlog::error("llama: decode of {} tokens failed (code {})", batch.size(), rc);
    const absl::Status failed =
        absl::InternalError(StrCat("llama.cpp's decode failed (code ", rc, ")"));
    for (auto& slot : slots_) {
      if (slot->running()) Abandon(*slot, failed);
    }
    return false;
  }
  MutexLock lock(&mu_);
  ++stats_.decode_steps;
  stats_.decode_time += step_end_ - start;
  stats_.prompt_tokens += static_cast<uint64_t>(plan.prompt_tokens);
  return true;
}

void LlamaEngine::SampleAndDeliver() {
  for (auto& slot : slots_) {
    if (!slot->running() || slot->batch_index < 0) continue;
    const int32_t row = slot->batch_index;
    slot->batch_index = -1;
    int32_t token = -1;
    try {
      token = decoder_->Sample(slot->sampler, row);
    } catch (const std::exception& e) {
      // A grammar sampler throws when its grammar has no way on (a client's grammar that no
      // token of this vocabulary can continue): that sequence ends, the others go on.
      Finish(*slot, absl::InvalidArgumentError(StrCat("the output grammar failed: ", e.what())),
             FinishReason::kNone);
      continue;
    }
    if (slot->generated == 0) slot->first_token = step_end_;
    ++slot->generated;
    if (decoder_->IsEndOfGeneration(token)) {
      Finish(*slot, absl::OkStatus(), FinishReason::kStop);
      continue;
    }
    if (slot->request->logprobs >= 0) {
      slot->logprobs.push_back(LogprobOf(row, token, slot->request->logprobs));
    }
    GenerationEvent event;
    event.choice = slot->choice;
    event.text = slot->text->Add(decoder_->Piece(token));
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
}

void LlamaEngine::PublishOccupancy() {
  int64_t active = 0, used = 0;
  for (const auto& slot : slots_) {
    if (slot->running()) ++active;
    used += static_cast<int64_t>(slot->cache.size());
  }
  MutexLock lock(&mu_);
  stats_.active_sequences = active;
  stats_.kv_cells_used = used;
}

void LlamaEngine::AnswerAllUnloaded() {
  const absl::Status unloaded = absl::UnavailableError("the model was unloaded");
  std::deque<QueuedChoice> left;
  std::deque<std::unique_ptr<EmbedJob>> embeds;
  {
    MutexLock lock(&mu_);
    left = sequences_.TakeAll();
    stats_.queued = 0;
    embeds.swap(embed_queue_);
  }
  for (QueuedChoice& queued : left) FailChoice(*queued.request, queued.choice, unloaded);
  if (embedding_ != nullptr) embeds.push_front(std::move(embedding_));
  for (auto& job : embeds) job->Answer(unloaded);
  for (auto& slot : slots_) {
    if (slot->running()) Finish(*slot, unloaded, FinishReason::kNone);
  }
}

TokenLogprob LlamaEngine::LogprobOf(int32_t row, int32_t token, int top) const {
  const StepLogprobs step = LogprobsOf(decoder_->Logits(row), token, top);
  TokenLogprob out{decoder_->Piece(token), step.logprob, {}};
  out.top.reserve(step.top.size());
  for (const auto& [id, logprob] : step.top) out.top.emplace_back(decoder_->Piece(id), logprob);
  return out;
}

void LlamaEngine::Abandon(Slot& slot, absl::Status status) {
  decoder_->RemoveCells(slot.seq, -1);
  slot.cache.clear();
  slot.batch_index = -1;
  Finish(slot, std::move(status), FinishReason::kNone);
}

void LlamaEngine::Finish(Slot& slot, absl::Status status, FinishReason reason) {
  GenerationEvent event;
  event.choice = slot.choice;
  event.done = true;
  if (status.ok()) {
    event.text = slot.text->Flush();
    if (reason == FinishReason::kStop) event.stop_sequence = slot.text->stopped_by();
    // A stop of the tool format is the model ending its reply, not a client's stop string.
    if (slot.tool_prompt != nullptr &&
        std::find(slot.request->stop.begin(), slot.request->stop.end(), event.stop_sequence) ==
            slot.request->stop.end()) {
      event.stop_sequence.clear();
    }
    event.logprobs = std::move(slot.logprobs);
    if (slot.tool_prompt != nullptr) {
      // A short reply's parse, once, on the decode thread (its cost grows with the reply,
      // which max_tokens bounds).
      ChatToolReply reply = ChatToolFormat::Parse(*slot.tool_prompt, slot.text->text(),
                                                  slot.request->tools->call_id_prefix);
      ToolReplyParsed& parsed = event.tool_reply.emplace();
      parsed.content = std::move(reply.content);
      for (ChatToolCall& call : reply.calls) {
        parsed.calls.push_back(
            GeneratedToolCall{std::move(call.id), std::move(call.name), std::move(call.arguments)});
      }
    }
  }
  slot.tool_prompt.reset();
  slot.logprobs.clear();
  event.status = std::move(status);
  event.finish_reason = reason;
  event.usage.prompt_tokens = static_cast<int64_t>(slot.prompt->size());
  event.usage.cached_prompt_tokens = slot.cached;
  event.usage.completion_tokens = slot.generated;
  const TimePoint now = time_->Now();
  event.usage.total = now - slot.request->arrival;
  if (slot.generated > 0) {
    event.usage.time_to_first_token = slot.first_token - slot.request->arrival;
  }
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
