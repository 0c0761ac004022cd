// LlamaEngine's private records, shared by its two files (llama_engine.cc: requests in;
// llama_engine_steps.cc: the decode loop): a sequence slot and an embeddings job.
// Not for other includers.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_SLOT_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_SLOT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/llama/chat_tool_format.h"
#include "backends/llama/llama_engine.h"
#include "backends/llama/sampler_chain.h"
#include "backends/llama/text_assembler.h"

namespace inferd {

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
  // QueuedChoice::tool_prompt: the reply is read back with it when it ends.
  std::shared_ptr<const ChatToolPrompt> tool_prompt;
  // With GenerateRequest::logprobs: tokens sampled whose text has not been sent yet.
  std::vector<TokenLogprob> logprobs;
  int32_t next = -1;  // sampled and not yet decoded
  int64_t generated = 0;
  int32_t batch_index = -1;
  TimePoint admitted{}, first_token{};

  bool running() const { return request != nullptr; }
  // Prompt tokens not yet in the cache.
  bool prompting() const { return prompt_done < prompt->size(); }
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_SLOT_H_
