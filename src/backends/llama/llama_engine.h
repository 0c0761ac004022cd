// One loaded GGUF model and its decode loop: continuous batching over `parallel` sequences.
//
// One thread per model owns the llama.cpp context and runs the loop in named steps
// (llama_engine_steps.cc): wait for work; admit queued requests into free sequence slots
// (reusing the longest cached prefix of their prompt); end the cancelled and expired ones;
// build the batch (the next token of every generating sequence plus chunks of pending prompts,
// up to batch_size tokens); decode it; sample each sequence's next token with its own sampler
// chain and deliver the new text, finishing the sequences that are done. Sequences join and
// leave between steps; a cancelled or expired request leaves at the next step and its slot is
// free again.
//
// The loop reaches llama.cpp only through a DecodeContext (decode_context.h) and tells time
// only through a TimeSource (common/clock.h), so its steps are unit-tested with a scripted
// context and a fake time (llama_engine_test.cc, no GGUF file); a loaded model's engine uses
// LlamaDecodeContext and real time.
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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "backends/llama/adapter_batching.h"
#include "backends/llama/decode_context.h"
#include "backends/llama/embedder.h"
#include "backends/llama/llama_options.h"
#include "backends/llama/request_preparer.h"
#include "backends/llama/sequence_queue.h"
#include "backends/llama/tokenizer.h"
#include "common/adaptive_threads.h"
#include "common/clock.h"
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
  // A request's prompt tokens, output limit and grammar, or why it cannot be served; called on
  // the preparation thread.
  using PrepareFunction =
      std::function<absl::StatusOr<PreparedRequest>(const GenerateRequest& request)>;

  // Loads `gguf` and creates the context and its KV cache, then loads `adapters` (one that
  // fails is unavailable, not fatal: the class comment). Errors name the file.
  static absl::StatusOr<std::unique_ptr<LlamaEngine>> Create(
      const std::filesystem::path& gguf, const LlamaOptions& options,
      const std::vector<LlamaAdapterFile>& adapters = {});
  // An engine without a model file: it generates through `context` (a scripted one in
  // llama_engine_test.cc), prepares each request with `prepare`, and reads `time` (which
  // must outlive it). No chat template, embeddings or adapters.
  static std::unique_ptr<LlamaEngine> CreateWithContext(std::unique_ptr<DecodeContext> context,
                                                        PrepareFunction prepare,
                                                        const LlamaOptions& options,
                                                        const TimeSource* time);
  ~LlamaEngine() override;

  void Generate(std::unique_ptr<GenerateRequest> request) override;
  absl::StatusOr<std::string> ApplyChatTemplate(
      const std::vector<ChatMessage>& messages) const override;
  absl::StatusOr<std::string> RenderChatPrompt(const GenerateRequest& request) const override;
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
  // What a loaded model gives the engine besides its decode context (Create); all null in
  // an engine made by CreateWithContext.
  struct ModelParts {
    llama_model* model = nullptr;
    llama_context* context = nullptr;
    std::unique_ptr<const Tokenizer> tokenizer;
    std::unique_ptr<const RequestPreparer> preparer;  // uses tokenizer
    std::unique_ptr<Embedder> embedder;               // null unless parameters.embeddings
    std::vector<Adapter> adapters;
  };
  // The step being built: the adapter set it serves and the prompt tokens it holds.
  struct StepPlan {
    AdapterSet adapters;
    int64_t prompt_tokens = 0;
  };

  LlamaEngine(ModelParts model, std::unique_ptr<DecodeContext> decoder, PrepareFunction prepare,
              const LlamaOptions& options, const TimeSource* time);

  // The preparation thread: renders and tokenises incoming requests, then queues them.
  void PrepareLoop();

  // The decode thread (llama_engine_steps.cc): the steps below until Shutdown, then answers
  // what is left.
  void Loop();
  // Waits until a sequence runs or something is queued; false when shutting down.
  bool WaitForWork();
  // Moves queued requests into free slots; drops cancelled and expired ones. True when it
  // admitted any.
  bool Admit();
  // Ends the running sequences whose client went away or whose deadline passed.
  void EndCancelledAndExpired();
  // Fills `batch` with this step's rows (one adapter set's sequences: their next tokens,
  // then prompt chunks); nullopt when no sequence has a row to add.
  std::optional<StepPlan> BuildBatch(DecodeBatch& batch);
  // Sets the step's adapters and thread count and decodes `batch`; on failure ends the
  // sequences it concerned and returns false.
  bool DecodeStep(const DecodeBatch& batch, const StepPlan& plan);
  // Samples the next token of each sequence with a row in the last batch, delivers its text
  // and finishes the sequences that are done.
  void SampleAndDeliver();
  // Answers everything still queued or running with Unavailable (shutting down).
  void AnswerAllUnloaded();
  // Running sequences and KV cells in use, for the statistics.
  void PublishOccupancy();
  void Finish(Slot& slot, absl::Status status, FinishReason reason);
  // Ends `slot`'s sequence after a failed step: its KV cells go with it.
  void Abandon(Slot& slot, absl::Status status);
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

  ModelParts model_;
  std::unique_ptr<DecodeContext> decoder_;
  const PrepareFunction prepare_;
  const LlamaOptions options_;
  const TimeSource* const time_;
  uint64_t weight_bytes_ = 0;
  uint64_t kv_bytes_ = 0;
  uint64_t adapter_bytes_ = 0;
  bool generates_ = true;  // false for an encoder (non-causal attention)
  // Decode loop only: the thread count of decode-only steps (common/adaptive_threads.h), and the
  // count the context was last set to.
  AdaptiveThreads decode_threads_;
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
  TimePoint step_end_{};         // when the last decode returned
  std::thread thread_;
  std::thread prepare_thread_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_
