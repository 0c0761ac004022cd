// One loaded GGUF model and its decode loop: continuous batching over `parallel` sequences.
//
// One thread per model owns the llama.cpp context. Each step it admits queued requests into
// free sequence slots (reusing the longest cached prefix of their prompt), then makes one
// engine call holding the next token of every generating sequence plus chunks of pending
// prompts up to batch_size tokens, samples each sequence's next token with its own sampler
// chain, and reports the new text. Sequences join and leave between steps; a cancelled or
// expired request leaves at the next step and its slot is free again.
//
// Requests are prepared on a thread of their own (request_preparer.h): chat messages rendered
// (their contents tokenised as plain text, prompt_segments.h), the prompt tokenised once for all of
// a request's n choices, checked against the context, then queued as n sequences. Neither the
// caller (an I/O thread) nor the decode thread does work in proportion to a client's prompt;
// a prompt longer in bytes than the context could hold in this vocabulary's longest tokens is
// refused before it is tokenised at all.
//
// LoRA adapters (config.yaml `adapters:`) are loaded with the model, their bytes counted in
// memory_bytes(), and freed with it. A request decodes with the adapter set it names
// (GenerateRequest::adapters); since llama.cpp applies adapters to the whole context, a step
// holds only sequences of one set and the sets ready take steps in turn (adapter_batching.h).
// An adapter whose file does not load leaves the base model and the other adapters serving:
// requests naming it are refused with Unavailable, naming the file and why.
//
// Thread-safety: Generate, ApplyChatTemplate and Stats are thread-safe. Ownership: the engine
// owns queued and running requests and answers each exactly once; Shutdown (or the
// destructor) answers the rest with Unavailable.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "backends/llama/adapter_batching.h"
#include "backends/llama/decode_threads.h"
#include "backends/llama/embedder.h"
#include "backends/llama/llama_options.h"
#include "backends/llama/request_preparer.h"
#include "backends/llama/sequence_queue.h"
#include "backends/llama/tokenizer.h"
#include "common/mutex.h"
#include "core/backend/generation.h"

struct llama_model;
struct llama_context;
struct llama_adapter_lora;

namespace inferd {

// A LoRA adapter file to load with the model.
struct LlamaAdapterFile {
  std::string name;
  std::filesystem::path path;
};

class LlamaEngine : public GenerativeModel {
 public:
  // Loads `gguf` and creates the context and its KV cache, then loads `adapters` (one that
  // fails is unavailable, not fatal: the class comment). Errors name the file.
  static absl::StatusOr<std::unique_ptr<LlamaEngine>> Create(
      const std::filesystem::path& gguf, const LlamaOptions& options,
      const std::vector<LlamaAdapterFile>& adapters = {});
  ~LlamaEngine() override;

  void Generate(std::unique_ptr<GenerateRequest> request) override;
  absl::StatusOr<std::string> ApplyChatTemplate(
      const std::vector<ChatMessage>& messages) const override;
  GenerationStats Stats() const override;
  // Tokenizes the inputs here (an input too long fails at once) and queues the request; the
  // decode loop embeds one input between two decode steps, so a long list delays the
  // generating sequences by one input's pass at a time.
  void Embed(std::unique_ptr<EmbedRequest> request) override;
  // As Embed, for a reranker: each (query, document) pair is tokenised here as llama.cpp's
  // server builds it (rerank_prompt.h) and scored by the decode loop one pair at a time.
  void Rerank(std::unique_ptr<RerankRequest> request) override;
  void Shutdown() override;

  // Weights, the KV cache and the loaded adapters: what the memory budget counts.
  uint64_t memory_bytes() const { return weight_bytes_ + kv_bytes_ + adapter_bytes_; }
  uint64_t kv_bytes() const { return kv_bytes_; }

 private:
  struct Slot;
  struct EmbedJob;
  // A configured adapter: loaded (`adapter` set) or not (`error` says why).
  struct Adapter {
    std::string name;
    std::filesystem::path path;
    llama_adapter_lora* adapter = nullptr;
    std::string error;
  };

  // `embedder`: null unless parameters.embeddings.
  LlamaEngine(llama_model* model, llama_context* context, const LlamaOptions& options,
              std::unique_ptr<Embedder> embedder, std::vector<Adapter> adapters);

  void Loop();
  // The preparation thread: renders and tokenises incoming requests, then queues them.
  void PrepareLoop();
  // One step; false when there was nothing to do.
  bool Step();
  // Moves queued requests into free slots; drops cancelled and expired ones. True when it
  // admitted any.
  bool Admit();
  void Finish(Slot& slot, absl::Status status, FinishReason reason);
  // The adapter set `request` names, or why it cannot be served (an adapter this model does
  // not have, or one whose file did not load).
  absl::StatusOr<AdapterSet> AdapterSetOf(const GenerateRequest& request) const;
  // Makes `set` the context's adapters (a no-op when it already is). Decode thread only.
  absl::Status ApplyAdapters(const AdapterSet& set);
  // The logprobs of `token`, sampled from the logits of batch row `row`, with `top`
  // alternatives (OpenAI's logprobs). Decode thread only.
  TokenLogprob LogprobOf(int32_t row, int32_t token, int top) const;
  // Embeds the next input of the running embeddings request (taking the next queued one when
  // none runs) and answers it once its last input is done.
  void EmbedStep();
  // Queues an embeddings or rerank job, or answers it at once (queue full, shutting down).
  void QueueEmbedJob(std::unique_ptr<EmbedJob> job);
  // Answers the running embeddings request with `status` (OK: its result).
  void FinishEmbedding(absl::Status status);

  llama_model* const model_;
  llama_context* const context_;
  const Tokenizer tokenizer_;
  const RequestPreparer preparer_;  // uses tokenizer_
  const LlamaOptions options_;
  std::unique_ptr<Embedder> embedder_;  // null: no embeddings
  uint64_t weight_bytes_ = 0;
  uint64_t kv_bytes_ = 0;
  uint64_t adapter_bytes_ = 0;
  std::vector<Adapter> adapters_;  // set before the threads start, then read-only
  bool generates_ = true;          // false for an encoder (non-causal attention)
  // Decode loop only: the thread count of decode-only steps (decode_threads.h), and the
  // count the context was last set to.
  DecodeThreads decode_threads_;
  int prompt_threads_ = 1;
  int context_threads_ = 0;

  mutable Mutex mu_;
  CondVar work_;
  CondVar incoming_work_;
  // Requests waiting for the preparation thread (their sequences reserved in sequences_).
  std::deque<std::unique_ptr<GenerateRequest>> incoming_ ABSL_GUARDED_BY(mu_);
  // Sequences waiting for a slot, and the rules for starting them.
  SequenceQueue sequences_ ABSL_GUARDED_BY(mu_);
  std::deque<std::unique_ptr<EmbedJob>> embed_queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  GenerationStats stats_ ABSL_GUARDED_BY(mu_);

  // Decode thread only.
  std::vector<std::unique_ptr<Slot>> slots_;
  std::unique_ptr<EmbedJob> embedding_;  // the embeddings request being computed
  uint64_t tick_ = 0;
  AdapterSet applied_adapters_;  // the context's
  AdapterSet last_adapters_;     // the previous step's
  std::thread thread_;
  std::thread prepare_thread_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_
