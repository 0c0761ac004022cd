// Text generation as the core sees it: a request (a prompt or chat messages, sampling
// settings, limits), the events a generating model reports while it decodes, and the
// interface a backend's models implement, besides BackendModel, when they generate
// (backends/llama; ServedModel finds it with a cross-cast).
//
// Ownership: a frontend builds a GenerateRequest and hands it to the inference path
// (InferencePath::Generate), which checks it against the limits below and gives it to
// ServedModel::Generate as a unique_ptr; from then on the model owns it and calls `on_event`
// from its own threads, for each of the request's `n` choices zero or more times with text and
// exactly once with `done` set (a request refused before it is queued: every choice's `done`
// carries the same error). The callback must not block: frontends post the events to their own
// I/O threads. `cancelled` is the one field a frontend still touches afterwards (it sets it when
// the client goes away); it stops every choice.
#ifndef INFERD_CORE_BACKEND_GENERATION_H_
#define INFERD_CORE_BACKEND_GENERATION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "core/types/timings.h"

namespace inferd {

// Bounds every frontend applies to what a client sends, before the model sees it. The prompt's
// text (all messages, or all embedding inputs, together) is checked before it is tokenised: a
// tokeniser pass over a body-sized prompt would cost the server seconds only to say it is
// longer than any context; 1 MiB is far more than a 128k-token context's text.
inline constexpr size_t kMaxPromptBytes = 1 << 20;
// Documents one rerank request may score (each is a pass of the model).
inline constexpr size_t kMaxRerankDocuments = 512;
inline constexpr size_t kMaxStopStrings = 4;
inline constexpr size_t kMaxStopBytes = 256;
// OpenAI's "n": at most this many choices from one request (each is a sequence of its own in
// the model's decode loop, so n multiplies what one request may ask of it).
inline constexpr int kMaxChoices = 8;

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", ...
  std::string content;
};

// Tool calling in a chat model's own format. The frontend renders a request's tools in a
// generic format every chat model can follow (its `messages` and `output_format`) and gives
// them here as well, as the client sent them: a model whose chat template knows tools
// (backends/llama/chat_tool_format.h) renders these instead, holds the reply to its own call
// syntax and reads the calls back into the done event (GenerationEvent::tool_reply).
struct GeneratedToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // a JSON object, as text
};

struct ToolDefinition {
  std::string name;
  std::string description;
  std::string parameters;  // a JSON schema object, as text
};

// A message of the history as the client sent it: the assistant's with its calls, a tool's
// result with the id (and function name, when known) of the call it answers.
struct ToolTurn {
  std::string role;
  std::string content;
  std::vector<GeneratedToolCall> tool_calls;
  std::string tool_call_id;
  std::string tool_name;
};

struct GenerationTools {
  enum class Choice { kAuto, kRequired, kNamed };
  std::vector<ToolDefinition> functions;  // within the frontend's bounds, never empty
  Choice choice = Choice::kAuto;
  std::string named;  // kNamed: the function that must be called
  bool parallel = true;
  std::vector<ToolTurn> messages;        // the history, in place of GenerateRequest::messages
  std::string call_id_prefix = "call_";  // of the ids given to the reply's calls
};

// A reply read back by the model's own tool format: its text without the calls' syntax, and
// its calls (each with an id).
struct ToolReplyParsed {
  std::string content;
  std::vector<GeneratedToolCall> calls;
};

// How the next token is chosen. Temperature 0 is greedy (the most likely token).
// A bias added to one token's logit before sampling (OpenAI's logit_bias).
struct TokenBias {
  int32_t token = 0;
  float bias = 0;  // -100 .. 100; -100 bans the token, 100 all but forces it
};

// At most this many logit_bias entries (OpenAI allows 300).
inline constexpr size_t kMaxLogitBias = 1024;

struct SamplingParams {
  double temperature = 1.0;
  double top_p = 1.0;
  int top_k = 0;                 // 0: no top-k cut
  double min_p = 0;              // 0: no min-p cut
  std::optional<uint32_t> seed;  // absent: a random seed
  // Penalties over the last penalty_last_n tokens generated (llama.cpp's penalties sampler):
  // OpenAI's presence and frequency penalties (-2 .. 2, 0: none), and the multiplicative
  // repetition penalty of llama.cpp and Hugging Face (1: none).
  double presence_penalty = 0;
  double frequency_penalty = 0;
  double repetition_penalty = 1;
  int penalty_last_n = 64;
  std::vector<TokenBias> logit_bias;
};

// What the output must be: free text, or text a grammar allows (OpenAI's response_format
// json_object and json_schema, llama.cpp's server's GBNF `grammar`). The model compiles the
// format into a grammar that masks, at every step, each token that would break it.
struct OutputFormat {
  enum class Kind { kText, kJsonObject, kJsonSchema, kGrammar };
  Kind kind = Kind::kText;
  // kJsonSchema: the schema as JSON text; kGrammar: GBNF text; empty otherwise.
  std::string text;
  // The request field it came from, for errors, when not 'response_format' or 'grammar' (the
  // schema built from a chat request's 'tools').
  std::string field;
};

// A schema or grammar is compiled on the model's preparation thread, in time and memory that
// grow with its size: 64 KiB is far more than any real schema needs.
inline constexpr size_t kMaxOutputFormatBytes = 64 << 10;

// The request field an OutputFormat came from, for errors: its `field`, or 'response_format'
// or 'grammar'.
std::string_view OutputFormatField(const OutputFormat& format);

// OpenAI's logprobs: for each generated token, its log-probability under the model (the
// log-softmax of the model's logits, before temperature, penalties or any other sampler) and
// the `top` likeliest tokens at that step.
inline constexpr int kMaxTopLogprobs = 20;

struct TokenLogprob {
  std::string token;  // the token's text piece (bytes; may end inside a UTF-8 character)
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // likeliest first
};

enum class FinishReason { kNone, kStop, kLength };

struct GenerationUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_prompt_tokens = 0;  // prompt tokens reused from the KV cache
  Duration time_to_first_token{0};   // from admission to the first token
  Duration total{0};                 // from arrival to the last token
};

struct GenerationEvent {
  int choice = 0;      // which of the request's n choices, 0 ..< n
  std::string text;    // new text (never a partial UTF-8 sequence, never part of a stop string)
  int64_t tokens = 0;  // tokens this event's text came from
  bool done = false;
  // With done: OK and why it stopped, or the error (ResourceExhausted: queue full;
  // InvalidArgument: the prompt does not fit; Cancelled; DeadlineExceeded).
  absl::Status status;
  FinishReason finish_reason = FinishReason::kNone;
  // With done and kStop: the stop string that ended the text (Anthropic's stop_sequence);
  // empty when the model ended it.
  std::string stop_sequence;
  GenerationUsage usage;
  // With done, OK and GenerateRequest::tools served in the model's own format: the whole
  // reply (every event's text) read back. Absent: the frontend reads its generic format.
  std::optional<ToolReplyParsed> tool_reply;
  // With GenerateRequest::logprobs >= 0: the tokens sampled since the previous event, in order
  // (a token whose text is still held back is reported with the event that sends it).
  std::vector<TokenLogprob> logprobs;
};

// One LoRA adapter a request applies, with its scale. The frontend names it by `name` or, for
// llama.cpp's server's `lora` field, by `id` (its index in config.yaml's `adapters`); the
// inference path resolves an id to its name and checks the name against the model's config.
struct AdapterUse {
  std::string name;
  int64_t id = -1;  // -1: by name
  double scale = 1.0;
};

struct GenerateRequest {
  std::string id;
  // Exactly one of the two: raw text, or messages rendered with the model's chat template.
  std::string prompt;
  std::vector<ChatMessage> messages;
  bool chat = false;
  SamplingParams sampling;
  int64_t max_tokens = 0;  // 0: the model's limit
  std::vector<std::string> stop;
  OutputFormat output_format;
  // With tools (given besides their generic rendering in `messages` and `output_format`,
  // which a model that knows its own tool format ignores); null without.
  std::shared_ptr<const GenerationTools> tools;
  // -1: no logprobs. 0 .. kMaxTopLogprobs: each event carries its tokens' log-probabilities
  // with that many alternatives each.
  int logprobs = -1;
  // Choices generated from the one prompt (OpenAI's "n"), 1 ..< kMaxChoices: the prompt is
  // rendered and tokenised once, each choice is a sequence of its own; with a seed, choice i
  // samples with seed + i, so the choices differ and each is repeatable.
  int n = 1;
  // Whose requests may reuse each other's KV cache (the caller's tenant; empty: no tenant).
  // A cached prefix is reused only within one partition: otherwise a tenant could learn from
  // cached_tokens, or from the time to its first token, how much of its guess matched another
  // tenant's recent prompt.
  std::string cache_partition;
  // Reuse the KV cache's longest common prefix with an earlier request of the same partition
  // (a shared system prompt). Off: the whole prompt is processed, as a fresh engine would.
  bool cache_prompt = true;
  // Absent: no deadline. Past it the request ends with DeadlineExceeded, queued or decoding.
  std::optional<TimePoint> deadline;
  TimePoint arrival = Clock::now();
  // Set by the frontend when the client disconnects; the decode loop frees the sequence at
  // its next step.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  std::function<void(GenerationEvent)> on_event;
  // The LoRA adapters this request's sequences decode with (empty: the base model alone),
  // from "model": "base:adapter" (the config's scale) or the `lora` field; at most
  // kMaxAdapters, each scale checked (core/config/adapter_config.h).
  std::vector<AdapterUse> adapters;
};

// Embeddings of texts (OpenAI's /v1/embeddings): one pooled, L2-normalised vector per input.
// Ownership and callbacks as for GenerateRequest: the model owns it once handed over and calls
// `on_done` exactly once, from any thread, never blocking.
struct EmbedResult {
  std::vector<std::vector<float>> embeddings;  // one per input, in order
  int64_t prompt_tokens = 0;                   // all inputs' tokens together
};

struct EmbedRequest {
  std::vector<std::string> inputs;  // each non-empty
  // Present: the length the client expects; a model whose vectors differ refuses the request.
  std::optional<int64_t> dimensions;
  std::optional<TimePoint> deadline;
  TimePoint arrival = Clock::now();
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  std::function<void(absl::StatusOr<EmbedResult>)> on_done;
};

// Relevance scores of documents for a query (POST /v1/rerank), from a cross-encoder reranker
// (parameters.pooling: rank): one score per document, in the documents' order, as llama.cpp's
// rank pooling gives it (the classifier's first output, not normalised). Ownership and
// callbacks as for EmbedRequest.
struct RerankResult {
  std::vector<float> scores;  // one per document, in order
  int64_t prompt_tokens = 0;  // all pairs' tokens together
};

struct RerankRequest {
  std::string query;                   // non-empty
  std::vector<std::string> documents;  // 1..kMaxRerankDocuments, each non-empty
  std::optional<TimePoint> deadline;
  TimePoint arrival = Clock::now();
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  std::function<void(absl::StatusOr<RerankResult>)> on_done;
};

// A point-in-time view of a generating model, for statistics and metrics.
struct GenerationStats {
  int64_t context_length = 0;  // tokens per sequence
  int64_t parallel = 0;        // sequences decoded together
  int64_t active_sequences = 0;
  int64_t queued = 0;
  int64_t kv_cells_used = 0;  // of kv_cells_total
  int64_t kv_cells_total = 0;
  uint64_t requests = 0, requests_failed = 0;
  uint64_t prompt_tokens = 0, cached_prompt_tokens = 0, completion_tokens = 0;
  uint64_t decode_steps = 0;
  Duration decode_time{0};  // time inside the engine's decode calls
  DurationStat ttft;        // time to first token per request
  DurationStat tpot;        // time per output token after the first, per request
  uint64_t embedding_requests = 0, embedding_tokens = 0;  // /v1/embeddings
  uint64_t rerank_requests = 0, rerank_tokens = 0;        // /v1/rerank
};

// The limits every generation entry point applies, in one place (InferencePath::Generate):
// at most kMaxPromptBytes of prompt text (all messages together), 1..kMaxChoices choices, at
// most kMaxStopStrings stop strings of kMaxStopBytes each, max_tokens >= 0, an id of at most
// kMaxClientIdBytes, a schema or grammar of at most kMaxOutputFormatBytes. InvalidArgument
// naming the field. The model checks the rest against
// itself (the prompt's tokens against its context, max_tokens against its cap).
absl::Status CheckGenerateRequest(const GenerateRequest& request);
// The bytes of a request's prompt text: the prompt, or every message's role and content.
size_t PromptBytes(const GenerateRequest& request);

// A model that generates text. Thread-safety: every method is thread-safe.
class GenerativeModel {
 public:
  virtual ~GenerativeModel() = default;
  // Queues `request` (its chat template is rendered and its prompt tokenised off the caller's
  // thread); every outcome arrives through request->on_event.
  virtual void Generate(std::unique_ptr<GenerateRequest> request) = 0;
  // The prompt the model's chat template makes of `messages` (with the generation prompt).
  virtual absl::StatusOr<std::string> ApplyChatTemplate(
      const std::vector<ChatMessage>& messages) const = 0;
  // The prompt a chat request would have: with tools, as the model renders them (its own
  // format, or the generic one already in `request.messages`).
  virtual absl::StatusOr<std::string> RenderChatPrompt(const GenerateRequest& request) const {
    return ApplyChatTemplate(request.messages);
  }
  virtual GenerationStats Stats() const = 0;
  // Queues `request`; its outcome arrives through request->on_done (FailedPrecondition when
  // the model was not configured to compute embeddings).
  virtual void Embed(std::unique_ptr<EmbedRequest> request) = 0;
  // As Embed, for a reranker (FailedPrecondition when the model is not one).
  virtual void Rerank(std::unique_ptr<RerankRequest> request) = 0;
  // Ends every queued and running request with Unavailable and refuses new ones; returns
  // when the decode loop has stopped.
  virtual void Shutdown() = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_BACKEND_GENERATION_H_
