// Request parsing and reply encoding for the generation APIs: OpenAI's chat completions and
// completions, and the KServe generate extension. Plain functions over JSON text, so the
// rules are unit-tested without a server.
//
// Every client-supplied number and count is bounded here (max_tokens >= 1, temperature in
// [0, 2], at most 4 stop strings of at most 256 bytes, ...); the model checks the rest
// against itself (the prompt against its context, max_tokens against its cap).
#ifndef INFERD_FRONTENDS_HTTP_CODECS_GENERATION_CODEC_H_
#define INFERD_FRONTENDS_HTTP_CODECS_GENERATION_CODEC_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/http_types.h"

namespace inferd {

enum class GenerationApi { kChat, kCompletion, kKServe };

// What a parsed request asks for besides the GenerateRequest itself.
struct GenerationCall {
  GenerationApi api = GenerationApi::kChat;
  std::string model;          // OpenAI: the body's "model"; KServe: the path's
  std::string model_version;  // KServe: filled in once a version is chosen
  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage
  std::string id;              // "chatcmpl-...", "cmpl-...", or the KServe request id
  int64_t created = 0;         // Unix seconds
  int n = 1;                   // OpenAI: choices to generate, 1..kMaxChoices; KServe: 1
  bool logprobs = false;       // OpenAI: the choices carry logprobs (else "logprobs": null)
  // Chat with tools that may be called (ToolSet::active): each choice's text is the tool
  // format's JSON, answered as tool_calls or content (a stream sends it when the choice ends).
  std::shared_ptr<const ToolSet> tools;
};

// One finished choice: its text and its last event (finish reason, usage).
struct GenerationChoice {
  std::string text;
  GenerationEvent done;
  std::vector<TokenLogprob> logprobs;  // with GenerationCall::logprobs: every token's
  size_t token_bytes = 0;              // streaming: bytes of the tokens reported so far
};

// The usage of `choices` generated from one prompt: the prompt counted once, the completions
// summed.
GenerationUsage TotalUsage(std::span<const GenerationChoice> choices);

struct ParsedGeneration {
  GenerationCall call;
  std::unique_ptr<GenerateRequest> request;
};

// InvalidArgument naming `field`, marked kContextLengthExceeded (common/error_detail.h), when
// a prompt's text has more than kMaxPromptBytes (core/backend/generation.h).
absl::Status CheckPromptBytes(size_t bytes, std::string_view field);

// The "messages" of an OpenAI chat body: role and content (a string, null, or text parts),
// with the history's tool calls and results in the generic tool format. With `turns`, the
// messages as the client sent them as well (for a model's own tool format).
absl::StatusOr<std::vector<ChatMessage>> ParseChatMessages(simdjson::dom::object body,
                                                           std::vector<ToolTurn>* turns = nullptr);

// Parses an OpenAI chat completions or completions body (api kChat or kCompletion).
absl::StatusOr<ParsedGeneration> ParseOpenAiRequest(simdjson::dom::element body, GenerationApi api);
// Parses a KServe generate body: {"text_input": ..., "parameters": {...}} (parameters may
// also stand at the top level, as Triton's clients send them). `stream` is the endpoint's.
absl::StatusOr<ParsedGeneration> ParseKServeGenerate(simdjson::dom::element body, bool stream);

// The reply for a whole generation (non-streaming): one choice per element, in order.
HttpReply EncodeGenerationReply(const GenerationCall& call,
                                std::span<const GenerationChoice> choices);
// Streaming: the server-sent event for the start of choice `index` (OpenAI chat: the
// assistant role; else empty), for a piece of its text, and for its end (its last text and
// finish reason; KServe: the final event with usage); then the end of the stream (OpenAI:
// the usage when asked for, and [DONE]; KServe: nothing).
std::string EncodeStreamStart(const GenerationCall& call, int index = 0);
// `logprobs`: the tokens of `text` (GenerationCall::logprobs); `offset`: the bytes of the
// choice's text sent before, for the completions API's text_offset.
std::string EncodeStreamText(const GenerationCall& call, std::string_view text, int index = 0,
                             std::span<const TokenLogprob> logprobs = {}, size_t offset = 0);
std::string EncodeStreamChoiceEnd(const GenerationCall& call, const GenerationEvent& done,
                                  int index = 0, size_t offset = 0);
// With call.tools: the end of choice `index` whose whole text is `text` (held back until now):
// its content, or its tool_calls deltas (OpenAI's chunk shapes), then its finish reason.
std::string EncodeStreamToolChoiceEnd(const GenerationCall& call, std::string_view text,
                                      const GenerationEvent& done, int index = 0);
std::string EncodeStreamFinish(const GenerationCall& call, const GenerationUsage& usage);
// The end of a one-choice stream: EncodeStreamChoiceEnd, then EncodeStreamFinish.
std::string EncodeStreamEnd(const GenerationCall& call, const GenerationEvent& done);
// An error after the stream has started: one event with the error, then the end.
std::string EncodeStreamError(const GenerationCall& call, const absl::Status& status);

// An error reply in the API's own shape: OpenAI's {"error": {"message", "type", "param",
// "code"}} (openai_error.h), or KServe's {"error": "..."}.
HttpReply GenerationErrorReply(GenerationApi api, const absl::Status& status);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_GENERATION_CODEC_H_
