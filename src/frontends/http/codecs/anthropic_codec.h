// Request parsing and reply encoding for Anthropic's Messages API (POST
// /v1/messages), so Anthropic's own SDKs work unchanged against inferd's chat
// models. Plain functions over JSON text, unit-tested without a server.
//
// Bounded as the OpenAI codec bounds (request_fields.h, core/backend/generation.h): the
// same limits on prompt bytes, messages, stop strings and sampling values.
// Every field Anthropic defines that inferd does not implement (server tools,
// images, thinking, ...) is refused with a 400 naming it, never accepted and ignored.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_ANTHROPIC_CODEC_H_
#define INFERD_FRONTENDS_HTTP_CODECS_ANTHROPIC_CODEC_H_

#include <memory>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/http_types.h"

namespace inferd {

// What a parsed request asks for besides the GenerateRequest itself.
struct AnthropicCall {
  std::string model;
  std::string id;  // "msg_..."
  bool stream = false;
  // With tools that may be called (ToolSet::active): the text is the tool format's JSON,
  // answered as text or tool_use blocks (a stream sends them once generation ends).
  std::shared_ptr<const ToolSet> tools;
};

struct ParsedAnthropicMessages {
  AnthropicCall call;
  std::unique_ptr<GenerateRequest> request;
};

// Parses a Messages API body: model, max_tokens (required), messages (user and
// assistant turns, each a string or text blocks), system, temperature, top_p,
// top_k, stop_sequences, stream, metadata.user_id. InvalidArgument naming the
// field for anything else.
absl::StatusOr<ParsedAnthropicMessages> ParseAnthropicMessages(simdjson::dom::element body);

// The whole reply: {"id", "type": "message", "role": "assistant", "model",
// "content":
// [{"type": "text", "text"}], "stop_reason", "stop_sequence", "usage"}. `done`
// is the last event (finish reason, stop string, usage).
HttpReply EncodeAnthropicMessage(const AnthropicCall& call, std::string_view text,
                                 const GenerationEvent& done);

// Streaming, as Anthropic's server-sent events: message_start,
// content_block_start and a ping; a content_block_delta for each piece of text;
// then content_block_stop, message_delta (stop reason, usage) and message_stop.
std::string EncodeAnthropicStreamStart(const AnthropicCall& call);
// message_start, the text block's content_block_start when `text_block` (without: with
// call.tools, whose blocks come with the end), and a ping.
std::string EncodeAnthropicStreamHead(const AnthropicCall& call, bool text_block);
// With call.tools: the blocks of the whole `text` (a text block, or a tool_use block per call
// with its input as one input_json_delta), then message_delta and message_stop.
std::string EncodeAnthropicStreamToolEnd(std::string_view text, const GenerationEvent& done);
std::string EncodeAnthropicStreamText(std::string_view text);
std::string EncodeAnthropicStreamEnd(const GenerationEvent& done);
// An error after the stream started: one `event: error`.
std::string EncodeAnthropicStreamError(const absl::Status& status);

// Anthropic's error object for `status` answered with HTTP status
// `http_status`:
// {"type": "error", "error": {"type", "message"}}; the type follows the status
// (invalid_request_error, authentication_error, permission_error,
// not_found_error, request_too_large, rate_limit_error, api_error,
// overloaded_error).
std::string AnthropicErrorBody(unsigned http_status, const absl::Status& status);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_ANTHROPIC_CODEC_H_
