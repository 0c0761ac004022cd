#include "frontends/http/codecs/anthropic_codec.h"

#include <algorithm>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/client_paths.h"
#include "common/http_status.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/backend/infer_request.h"
#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/request_fields.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr size_t kMaxMessages = 4096;
// metadata.user_id: Anthropic's own limit.
constexpr size_t kMaxUserIdBytes = 256;

void String(Writer& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

absl::Status NotSupported(std::string_view field) {
  return InvalidField(field, StrCat(field,
                                    ": not supported by this server (docs/llm.md lists what "
                                    "is); remove it rather than have it ignored"));
}

// A field that must be an object holding only `known` keys; others are refused
// by name.
absl::Status CheckKeys(object o, std::span<const std::string_view> known, std::string_view where) {
  for (auto [key, value] : o) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    // A null asks for nothing (as a client that always sends its defaults sends
    // it).
    if (value.is_null()) continue;
    return NotSupported(where.empty() ? std::string(key) : StrCat(where, ".", key));
  }
  return absl::OkStatus();
}

// A content: a string, or a list of {"type": "text", "text": ...} blocks joined
// with newlines. `where` names it in errors ("messages[2].content", "system").
// `role` (a message's) allows its tool blocks: an assistant's tool_use, a user's
// tool_result; they become the tool format's JSON (generation_codec_tools.h). With `turns`,
// the message as sent as well, for a model's own tool format: an assistant turn with its
// calls, or a `tool` turn per tool_result and a user turn with the text.
absl::StatusOr<std::string> ReadText(element value, const std::string& where,
                                     std::string_view role = {},
                                     std::vector<ToolTurn>* turns = nullptr) {
  std::string_view text;
  if (!value.get(text)) {
    if (turns != nullptr)
      turns->push_back(ToolTurn{std::string(role), std::string(text), {}, {}, {}});
    return std::string(text);
  }
  array blocks;
  if (value.get(blocks)) {
    return InvalidField(where, StrCat(where, ": must be a string or a list of content blocks"));
  }
  std::string joined;
  std::string plain;  // the text blocks alone
  std::vector<ToolCall> calls;
  std::vector<ToolTurn> results;
  size_t index = 0;
  for (element item : blocks) {
    const std::string block_name = StrCat(where, "[", index++, "]");
    object block;
    std::string_view type;
    if (item.get(block) || block["type"].get(type)) {
      return InvalidField(block_name, StrCat(block_name, ": must be an object with a 'type'"));
    }
    if (type == "tool_use" && role == "assistant") {
      static constexpr std::string_view kUseKeys[] = {"type", "id", "name", "input"};
      RETURN_IF_ERROR(CheckKeys(block, kUseKeys, block_name));
      std::string_view id, name;
      object input;
      if (block["id"].get(id) || id.size() > kMaxClientIdBytes || block["name"].get(name) ||
          !IsToolName(name) || block["input"].get(input)) {
        return InvalidField(
            block_name,
            StrCat(block_name, ": a tool_use block has an id (at most ", kMaxClientIdBytes,
                   " bytes), a name (^[a-zA-Z0-9_-]{1,64}$) and an input object"));
      }
      if (calls.size() >= kMaxToolCallsPerMessage) {
        return InvalidField(
            where, StrCat(where, ": at most ", kMaxToolCallsPerMessage, " tool_use blocks"));
      }
      calls.push_back(ToolCall{std::string(id), std::string(name), simdjson::minify(input)});
      continue;
    }
    if (type == "tool_result" && role == "user") {
      static constexpr std::string_view kResultKeys[] = {"type", "tool_use_id", "content",
                                                         "is_error"};
      RETURN_IF_ERROR(CheckKeys(block, kResultKeys, block_name));
      std::string_view id;
      if (block["tool_use_id"].get(id) || id.size() > kMaxClientIdBytes) {
        return InvalidField(
            StrCat(block_name, ".tool_use_id"),
            StrCat(block_name, ".tool_use_id: required, at most ", kMaxClientIdBytes, " bytes"));
      }
      std::string result;
      element content;
      if (!block["content"].get(content) && !content.is_null()) {
        ASSIGN_OR_RETURN(result, ReadText(content, StrCat(block_name, ".content")));
      }
      bool is_error = false;
      RETURN_IF_ERROR(ReadBool(block, "is_error", &is_error));
      if (!joined.empty()) joined += '\n';
      joined += ToolResultTurn(id, {}, result, is_error);
      if (turns != nullptr) {
        results.push_back(ToolTurn{
            "tool", is_error ? StrCat("Error: ", result) : result, {}, std::string(id), {}});
      }
      continue;
    }
    if (type != "text") {
      return InvalidField(StrCat(block_name, ".type"),
                          StrCat(block_name, ".type: '", type.substr(0, 64),
                                 "' blocks are not supported here by this server (text; "
                                 "tool_use in assistant turns, tool_result in user turns); "
                                 "remove them rather than have them ignored"));
    }
    static constexpr std::string_view kBlockKeys[] = {"type", "text"};
    RETURN_IF_ERROR(CheckKeys(block, kBlockKeys, block_name));
    std::string_view block_text;
    if (block["text"].get(block_text)) {
      return InvalidField(StrCat(block_name, ".text"),
                          StrCat(block_name, ".text: required, a string"));
    }
    if (!joined.empty()) joined += '\n';
    joined.append(block_text);
    if (!plain.empty()) plain += '\n';
    plain.append(block_text);
  }
  if (turns != nullptr) {
    for (ToolTurn& result : results) turns->push_back(std::move(result));
    if (!calls.empty() || !plain.empty() || results.empty()) {
      ToolTurn& turn = turns->emplace_back();
      turn.role = std::string(role);
      turn.content = plain;
      for (const ToolCall& call : calls) {
        turn.tool_calls.push_back(GeneratedToolCall{call.id, call.name, call.arguments});
      }
    }
  }
  if (!calls.empty()) return ToolCallsTurn(calls, joined);
  return joined;
}

absl::StatusOr<std::vector<ChatMessage>> ReadMessages(object o, std::vector<ToolTurn>* turns) {
  array messages;
  if (o["messages"].get(messages)) {
    return InvalidField("messages", "messages: required, a list of {\"role\", \"content\"}");
  }
  if (messages.size() == 0) return InvalidField("messages", "messages: must not be empty");
  if (messages.size() > kMaxMessages) {
    return InvalidField("messages",
                        StrCat("messages: at most ", kMaxMessages, ", got ", messages.size()));
  }
  std::vector<ChatMessage> out;
  size_t index = 0;
  for (element item : messages) {
    const std::string name = StrCat("messages[", index++, "]");
    object message;
    std::string_view role;
    if (item.get(message) || message["role"].get(role)) {
      return InvalidField(name, StrCat(name, ": must be an object with a string 'role'"));
    }
    if (role != "user" && role != "assistant") {
      return InvalidField(
          StrCat(name, ".role"),
          StrCat(name, ".role: must be 'user' or 'assistant', got '", role.substr(0, 64), "'"));
    }
    static constexpr std::string_view kMessageKeys[] = {"role", "content"};
    RETURN_IF_ERROR(CheckKeys(message, kMessageKeys, name));
    element content;
    if (message["content"].get(content)) {
      return InvalidField(StrCat(name, ".content"), StrCat(name, ".content: required"));
    }
    ASSIGN_OR_RETURN(std::string text, ReadText(content, StrCat(name, ".content"), role, turns));
    out.push_back(ChatMessage{std::string(role), std::move(text)});
  }
  // An assistant turn last asks the model to continue it (Anthropic's prefill);
  // a chat template closes that turn and opens a new one instead, which is not
  // the same answer.
  if (out.back().role != "user") {
    return InvalidField("messages",
                        "messages: the last message must be a 'user' turn (a "
                        "final 'assistant' turn to continue is not supported)");
  }
  return out;
}

std::string_view StopReason(const GenerationEvent& done, bool tool_use = false) {
  if (tool_use) return "tool_use";
  if (done.finish_reason == FinishReason::kLength) return "max_tokens";
  return done.stop_sequence.empty() ? "end_turn" : "stop_sequence";
}

void WriteStop(Writer& w, const GenerationEvent& done, bool tool_use = false) {
  w.Key("stop_reason");
  String(w, StopReason(done, tool_use));
  w.Key("stop_sequence");
  if (done.stop_sequence.empty()) {
    w.Null();
  } else {
    String(w, done.stop_sequence);
  }
}

void WriteUsage(Writer& w, int64_t input_tokens, int64_t output_tokens) {
  w.Key("usage");
  w.StartObject();
  w.Key("input_tokens");
  w.Int64(input_tokens);
  w.Key("output_tokens");
  w.Int64(output_tokens);
  w.EndObject();
}

// The message object without its content and stop fields' values (shared by the
// reply and message_start).
void WriteMessageHead(Writer& w, const AnthropicCall& call) {
  w.Key("id");
  String(w, call.id);
  w.Key("type");
  String(w, "message");
  w.Key("role");
  String(w, "assistant");
  w.Key("model");
  String(w, call.model);
}

std::string Event(std::string_view name, const rapidjson::StringBuffer& buffer) {
  std::string event = StrCat("event: ", name, "\ndata: ");
  event.append(buffer.GetString(), buffer.GetSize());
  event += "\n\n";
  return event;
}

// message_delta (the stop reason, the usage) and message_stop.
std::string MessageEnd(const GenerationEvent& done, bool tool_use) {
  std::string events;
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("type");
  String(w, "message_delta");
  w.Key("delta");
  w.StartObject();
  WriteStop(w, done, tool_use);
  w.EndObject();
  // Cumulative counts (Anthropic's SDKs overwrite message_start's with them).
  WriteUsage(w, done.usage.prompt_tokens, done.usage.completion_tokens);
  w.EndObject();
  events += Event("message_delta", buffer);
  events += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return events;
}

std::string_view ErrorType(unsigned http_status) {
  switch (http_status) {
    case 400:
    case 405:
    case 409:
    case 501:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return http_status >= 500 ? "api_error" : "invalid_request_error";
  }
}

}  // namespace

absl::StatusOr<ParsedAnthropicMessages> ParseAnthropicMessages(element body) {
  object o;
  if (body.get(o)) return absl::InvalidArgumentError("the request body must be a JSON object");
  // cache_prompt is inferd's extension, as on the OpenAI paths (false: process
  // the whole prompt, reusing no cached prefix).
  static constexpr std::string_view kFields[] = {
      "model",        "max_tokens", "messages",   "system",   "temperature",
      "top_p",        "top_k",      "stream",     "metadata", "stop_sequences",
      "cache_prompt", "tools",      "tool_choice"};
  RETURN_IF_ERROR(CheckKeys(o, kFields, ""));
  ParsedAnthropicMessages parsed;
  parsed.request = std::make_unique<GenerateRequest>();
  GenerateRequest& request = *parsed.request;
  std::string_view model;
  if (o["model"].get(model) || model.empty()) {
    return InvalidField("model", "model: required, the name of a model this server serves");
  }
  parsed.call.model = std::string(model);
  element max_tokens;
  if (o["max_tokens"].get(max_tokens) || max_tokens.is_null()) {
    return InvalidField("max_tokens", "max_tokens: required, the most tokens to generate");
  }
  RETURN_IF_ERROR(ReadInteger(o, "max_tokens", 1, 1 << 24, &request.max_tokens));
  // Anthropic's ranges: temperature in [0, 1].
  RETURN_IF_ERROR(ReadNumber(o, "temperature", 0, 1, &request.sampling.temperature));
  RETURN_IF_ERROR(ReadNumber(o, "top_p", 0, 1, &request.sampling.top_p));
  if (request.sampling.top_p <= 0) return InvalidField("top_p", "top_p: must be in (0, 1]");
  int64_t top_k = request.sampling.top_k;
  RETURN_IF_ERROR(ReadInteger(o, "top_k", 0, 1 << 20, &top_k));
  request.sampling.top_k = static_cast<int>(top_k);
  element stops;
  if (!o["stop_sequences"].get(stops) && !stops.is_null() && !stops.is_array()) {
    return InvalidField("stop_sequences", "stop_sequences: must be a list of strings");
  }
  RETURN_IF_ERROR(ReadStops(o, "stop_sequences", &request.stop));
  RETURN_IF_ERROR(ReadBool(o, "stream", &parsed.call.stream));
  RETURN_IF_ERROR(ReadBool(o, "cache_prompt", &request.cache_prompt));
  element metadata;
  if (!o["metadata"].get(metadata) && !metadata.is_null()) {
    object fields;
    if (metadata.get(fields)) return InvalidField("metadata", "metadata: must be an object");
    static constexpr std::string_view kMetadataKeys[] = {"user_id"};
    RETURN_IF_ERROR(CheckKeys(fields, kMetadataKeys, "metadata"));
    element user;
    std::string_view user_id;
    if (!fields["user_id"].get(user) && !user.is_null() &&
        (user.get(user_id) || user_id.size() > kMaxUserIdBytes)) {
      return InvalidField(
          "metadata.user_id",
          StrCat("metadata.user_id: must be a string of at most ", kMaxUserIdBytes, " bytes"));
    }
    // An opaque id Anthropic keeps for abuse reports; inferd has nothing to do
    // with it.
  }
  std::vector<ToolTurn> turns;  // the messages as sent, for a model's own tool format
  element system;
  if (!o["system"].get(system) && !system.is_null()) {
    ASSIGN_OR_RETURN(std::string text, ReadText(system, "system"));
    turns.push_back(ToolTurn{"system", text, {}, {}, {}});
    request.messages.push_back(ChatMessage{"system", std::move(text)});
  }
  ASSIGN_OR_RETURN(std::vector<ChatMessage> messages, ReadMessages(o, &turns));
  // A tool_result names only its call: the function is the call's.
  std::unordered_map<std::string, std::string> call_names;
  for (const ToolTurn& turn : turns) {
    for (const GeneratedToolCall& call : turn.tool_calls) call_names[call.id] = call.name;
  }
  for (ToolTurn& turn : turns) {
    auto it = call_names.find(turn.tool_call_id);
    if (turn.role == "tool" && it != call_names.end()) turn.tool_name = it->second;
  }
  size_t bytes = 0;
  for (ChatMessage& message : messages) request.messages.push_back(std::move(message));
  for (const ChatMessage& message : request.messages) {
    bytes += message.role.size() + message.content.size();
  }
  RETURN_IF_ERROR(CheckPromptBytes(bytes, "messages"));
  request.chat = true;
  ASSIGN_OR_RETURN(ToolSet tools, ReadAnthropicTools(o));
  if (tools.active()) {
    RETURN_IF_ERROR(ApplyTools(tools, request));
    request.tools = ModelToolsOf(tools, std::move(turns), "toolu_");
    parsed.call.tools = std::make_shared<const ToolSet>(std::move(tools));
  }
  parsed.call.id = "msg_";
  return parsed;
}

HttpReply EncodeAnthropicMessage(const AnthropicCall& call, std::string_view text,
                                 const GenerationEvent& done) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteMessageHead(w, call);
  w.Key("content");
  w.StartArray();
  ToolReply tools;
  if (call.tools != nullptr) {
    tools = ReadToolReply(text, done, "toolu_");
    text = tools.content;
  }
  if (tools.calls.empty()) {
    w.StartObject();
    w.Key("type");
    String(w, "text");
    w.Key("text");
    String(w, text);
    w.EndObject();
  }
  for (const ToolCall& tool_call : tools.calls) {
    w.StartObject();
    w.Key("type");
    String(w, "tool_use");
    w.Key("id");
    String(w, tool_call.id);
    w.Key("name");
    String(w, tool_call.name);
    w.Key("input");
    w.RawValue(tool_call.arguments.data(), tool_call.arguments.size(), rapidjson::kObjectType);
    w.EndObject();
  }
  w.EndArray();
  WriteStop(w, done, !tools.calls.empty());
  WriteUsage(w, done.usage.prompt_tokens, done.usage.completion_tokens);
  w.EndObject();
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

std::string EncodeAnthropicStreamStart(const AnthropicCall& call) {
  return EncodeAnthropicStreamHead(call, /*text_block=*/true);
}

std::string EncodeAnthropicStreamHead(const AnthropicCall& call, bool text_block) {
  std::string events;
  {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    w.Key("type");
    String(w, "message_start");
    w.Key("message");
    w.StartObject();
    WriteMessageHead(w, call);
    w.Key("content");
    w.StartArray();
    w.EndArray();
    w.Key("stop_reason");
    w.Null();
    w.Key("stop_sequence");
    w.Null();
    // The prompt's tokens are counted once it is processed: message_delta has
    // them.
    WriteUsage(w, 0, 0);
    w.EndObject();
    w.EndObject();
    events += Event("message_start", buffer);
  }
  if (text_block) {
    events +=
        "event: content_block_start\ndata: "
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{"
        "\"type\":\"text\","
        "\"text\":\"\"}}\n\n";
  }
  events += "event: ping\ndata: {\"type\":\"ping\"}\n\n";
  return events;
}

std::string EncodeAnthropicStreamText(std::string_view text) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("type");
  String(w, "content_block_delta");
  w.Key("index");
  w.Int(0);
  w.Key("delta");
  w.StartObject();
  w.Key("type");
  String(w, "text_delta");
  w.Key("text");
  String(w, text);
  w.EndObject();
  w.EndObject();
  return Event("content_block_delta", buffer);
}

std::string EncodeAnthropicStreamEnd(const GenerationEvent& done) {
  std::string events;
  if (!done.text.empty()) events += EncodeAnthropicStreamText(done.text);
  events +=
      "event: content_block_stop\ndata: "
      "{\"type\":\"content_block_stop\",\"index\":0}\n\n";
  return events + MessageEnd(done, false);
}

std::string EncodeAnthropicStreamToolEnd(std::string_view text, const GenerationEvent& done) {
  const ToolReply reply = ReadToolReply(text, done, "toolu_");
  if (reply.calls.empty()) {
    std::string events =
        "event: content_block_start\ndata: "
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{"
        "\"type\":\"text\",\"text\":\"\"}}\n\n";
    GenerationEvent last = done;
    last.text = reply.content;
    return events + EncodeAnthropicStreamEnd(last);
  }
  std::string events;
  int index = 0;
  for (const ToolCall& call : reply.calls) {
    {
      rapidjson::StringBuffer buffer;
      Writer w(buffer);
      w.StartObject();
      w.Key("type");
      String(w, "content_block_start");
      w.Key("index");
      w.Int(index);
      w.Key("content_block");
      w.StartObject();
      w.Key("type");
      String(w, "tool_use");
      w.Key("id");
      String(w, call.id);
      w.Key("name");
      String(w, call.name);
      w.Key("input");
      w.StartObject();
      w.EndObject();
      w.EndObject();
      w.EndObject();
      events += Event("content_block_start", buffer);
    }
    {
      rapidjson::StringBuffer buffer;
      Writer w(buffer);
      w.StartObject();
      w.Key("type");
      String(w, "content_block_delta");
      w.Key("index");
      w.Int(index);
      w.Key("delta");
      w.StartObject();
      w.Key("type");
      String(w, "input_json_delta");
      w.Key("partial_json");
      String(w, call.arguments);
      w.EndObject();
      w.EndObject();
      events += Event("content_block_delta", buffer);
    }
    events += StrCat("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":",
                     index, "}\n\n");
    ++index;
  }
  return events + MessageEnd(done, true);
}

std::string EncodeAnthropicStreamError(const absl::Status& status) {
  return StrCat("event: error\ndata: ", AnthropicErrorBody(HttpStatusFor(status.code()), status),
                "\n\n");
}

std::string AnthropicErrorBody(unsigned http_status, const absl::Status& status) {
  std::string message =
      WithoutServerPaths(std::string_view(status.message().data(), status.message().size()));
  if (message.empty()) message = StrCat("HTTP ", http_status);
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("type");
  String(w, "error");
  w.Key("error");
  w.StartObject();
  w.Key("type");
  String(w, ErrorType(http_status));
  w.Key("message");
  String(w, message);
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace inferd
