#include "frontends/http/generation_codec.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <span>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/backend/infer_request.h"
#include "frontends/http/generation_codec_tools.h"
#include "frontends/http/openai_error.h"
#include "frontends/http/request_fields.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr size_t kMaxMessages = 4096;

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

void String(Writer& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

std::string Body(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kNone:
      break;
  }
  return "stop";
}

// The sampling fields every API shares (OpenAI's body, KServe's parameters).
constexpr std::string_view kSamplingFields[] = {"temperature",
                                                "top_p",
                                                "top_k",
                                                "min_p",
                                                "seed",
                                                "stop",
                                                "cache_prompt",
                                                "presence_penalty",
                                                "frequency_penalty",
                                                "repetition_penalty",
                                                "repeat_last_n",
                                                "logit_bias"};

// OpenAI fields inferd does not implement, accepted only at the value that asks for nothing
// (so a client library that always sends its defaults works), refused otherwise: a
// parameter accepted and then ignored gives an application plausible output that is wrong
// far from the cause (JSON mode answered with prose).
bool IsNeutral(std::string_view key, element value) {
  if (value.is_null()) return true;
  bool flag = false;
  int64_t number = 0;
  std::string_view text;
  array list;
  if (key == "echo") return !value.get(flag) && !flag;
  if (key == "best_of") return !value.get(number) && number == 1;
  if (key == "suffix") return !value.get(text) && text.empty();
  if (key == "tools") return !value.get(list) && list.size() == 0;
  if (key == "tool_choice") return !value.get(text) && (text == "none" || text == "auto");
  if (key == "parallel_tool_calls") return !value.get(flag);
  if (key == "store") return !value.get(flag) && !flag;
  return false;
}

// Every field of `o` must be one of `known`, or of kSamplingFields when `sampling`, or a
// neutral OpenAI default (IsNeutral); InvalidArgument naming the first that is not.
absl::Status CheckFields(object o, std::span<const std::string_view> known, std::string_view where,
                         bool sampling = true) {
  for (auto [key, value] : o) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (sampling && std::find(std::begin(kSamplingFields), std::end(kSamplingFields), key) !=
                        std::end(kSamplingFields)) {
      continue;
    }
    if (IsNeutral(key, value)) continue;
    return InvalidField(key, StrCat("'", key, "'", where,
                                    " is not supported by this server (docs/llm.md lists what is); "
                                    "remove it rather than have it ignored"));
  }
  return absl::OkStatus();
}

// OpenAI's logit_bias: {"token id": bias}, ids as strings, bias in [-100, 100].
absl::Status ReadLogitBias(object o, std::vector<TokenBias>* out) {
  element value;
  if (o["logit_bias"].get(value) || value.is_null()) return absl::OkStatus();
  object biases;
  if (value.get(biases)) {
    return InvalidField("logit_bias", "'logit_bias' must be an object of token id: bias");
  }
  if (biases.size() > kMaxLogitBias) {
    return InvalidField("logit_bias", StrCat("'logit_bias' may name at most ", kMaxLogitBias,
                                             " tokens, got ", biases.size()));
  }
  for (auto [key, bias] : biases) {
    int64_t token = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), token);
    if (ec != std::errc() || end != key.data() + key.size() || token < 0 || token > INT32_MAX) {
      return InvalidField("logit_bias",
                          StrCat("'logit_bias' keys are token ids (integers), got '", key, "'"));
    }
    double number = 0;
    if (bias.get(number) || !(number >= -100 && number <= 100)) {
      return InvalidField(
          "logit_bias",
          StrCat("'logit_bias' values must be numbers in [-100, 100] (token ", key, ")"));
    }
    out->push_back({static_cast<int32_t>(token), static_cast<float>(number)});
  }
  return absl::OkStatus();
}

// The sampling fields and limits both OpenAI APIs and KServe's parameters share.
absl::Status ReadSampling(object o, GenerateRequest& request) {
  RETURN_IF_ERROR(ReadNumber(o, "temperature", 0, 2, &request.sampling.temperature));
  RETURN_IF_ERROR(ReadNumber(o, "top_p", 0, 1, &request.sampling.top_p));
  if (request.sampling.top_p <= 0) return InvalidField("top_p", "'top_p' must be in (0, 1]");
  int64_t top_k = request.sampling.top_k;
  RETURN_IF_ERROR(ReadInteger(o, "top_k", 0, 1 << 20, &top_k));
  request.sampling.top_k = static_cast<int>(top_k);
  RETURN_IF_ERROR(ReadNumber(o, "min_p", 0, 1, &request.sampling.min_p));
  RETURN_IF_ERROR(ReadNumber(o, "presence_penalty", -2, 2, &request.sampling.presence_penalty));
  RETURN_IF_ERROR(ReadNumber(o, "frequency_penalty", -2, 2, &request.sampling.frequency_penalty));
  RETURN_IF_ERROR(
      ReadNumber(o, "repetition_penalty", 0.01, 10, &request.sampling.repetition_penalty));
  int64_t last_n = request.sampling.penalty_last_n;
  RETURN_IF_ERROR(ReadInteger(o, "repeat_last_n", 0, 1 << 16, &last_n));
  request.sampling.penalty_last_n = static_cast<int>(last_n);
  RETURN_IF_ERROR(ReadLogitBias(o, &request.sampling.logit_bias));
  int64_t seed = 0;
  bool has_seed = false;
  RETURN_IF_ERROR(ReadInteger(o, "seed", INT64_MIN, INT64_MAX, &seed, &has_seed));
  if (has_seed) request.sampling.seed = static_cast<uint32_t>(seed);
  RETURN_IF_ERROR(ReadStops(o, "stop", &request.stop));
  // An extension (llama.cpp's server has it too): false processes the whole prompt.
  RETURN_IF_ERROR(ReadBool(o, "cache_prompt", &request.cache_prompt));
  return absl::OkStatus();
}

// OpenAI's response_format ({"type": "text" | "json_object" | "json_schema"}) and llama.cpp
// server's `grammar` (GBNF text): what the output must be. Only read here; the model checks
// the schema or grammar and compiles it, off this thread.
absl::Status ReadOutputFormat(object o, OutputFormat* out) {
  element grammar;
  if (!o["grammar"].get(grammar) && !grammar.is_null()) {
    std::string_view text;
    if (grammar.get(text))
      return InvalidField("grammar", "'grammar' must be a string (a GBNF grammar)");
    // An empty grammar asks for nothing (as llama.cpp's server takes it).
    if (!text.empty()) {
      out->kind = OutputFormat::Kind::kGrammar;
      out->text = std::string(text);
    }
  }
  element value;
  if (o["response_format"].get(value) || value.is_null()) return absl::OkStatus();
  object format;
  std::string_view type;
  if (value.get(format) || format["type"].get(type)) {
    return InvalidField(
        "response_format",
        "'response_format' must be an object with a 'type': text, json_object or json_schema");
  }
  if (type == "text" || type == "json_object") {
    static constexpr std::string_view kFields[] = {"type"};
    RETURN_IF_ERROR(CheckFields(format, kFields, " in 'response_format'", /*sampling=*/false));
  } else if (type == "json_schema") {
    static constexpr std::string_view kFields[] = {"type", "json_schema"};
    RETURN_IF_ERROR(CheckFields(format, kFields, " in 'response_format'", /*sampling=*/false));
  } else {
    return InvalidField("response_format",
                        StrCat("'response_format' type '", type,
                               "' is not supported (text, json_object and json_schema are)"));
  }
  if (type != "text" && out->kind == OutputFormat::Kind::kGrammar) {
    return InvalidField("grammar", "give 'response_format' or 'grammar', not both");
  }
  if (type == "text") return absl::OkStatus();
  if (type == "json_object") {
    out->kind = OutputFormat::Kind::kJsonObject;
    return absl::OkStatus();
  }
  object json_schema;
  if (format["json_schema"].get(json_schema)) {
    return InvalidField("response_format.json_schema",
                        "'response_format.json_schema' is required with type json_schema: "
                        "{\"name\": ..., \"schema\": {...}}");
  }
  // Every schema is enforced exactly: "strict" may say so, or not.
  static constexpr std::string_view kSchemaFields[] = {"name", "description", "schema", "strict"};
  RETURN_IF_ERROR(CheckFields(json_schema, kSchemaFields, " in 'response_format.json_schema'",
                              /*sampling=*/false));
  std::string_view name;
  element field;
  if (!json_schema["name"].get(field) && field.get(name)) {
    return InvalidField("response_format.json_schema.name",
                        "'response_format.json_schema.name' must be a string");
  }
  bool strict = true;
  if (!json_schema["strict"].get(field) && !field.is_null() && field.get(strict)) {
    return InvalidField("response_format.json_schema.strict",
                        "'response_format.json_schema.strict' must be true or false");
  }
  element schema;
  if (json_schema["schema"].get(schema) || !schema.is_object()) {
    return InvalidField("response_format.json_schema.schema",
                        "'response_format.json_schema.schema' is required: a JSON schema object");
  }
  out->kind = OutputFormat::Kind::kJsonSchema;
  out->text = simdjson::minify(schema);
  return absl::OkStatus();
}

// OpenAI's logprobs: chat takes `logprobs: true` and `top_logprobs: 0..20` (which needs
// logprobs); completions take `logprobs: 0..20`, the alternatives per token. -1: none.
absl::Status ReadLogprobs(object o, GenerationApi api, int* out) {
  if (api == GenerationApi::kCompletion) {
    int64_t top = -1;
    RETURN_IF_ERROR(ReadInteger(o, "logprobs", 0, kMaxTopLogprobs, &top));
    *out = static_cast<int>(top);
    return absl::OkStatus();
  }
  bool wanted = false;
  RETURN_IF_ERROR(ReadBool(o, "logprobs", &wanted));
  int64_t top = 0;
  bool top_present = false;
  RETURN_IF_ERROR(ReadInteger(o, "top_logprobs", 0, kMaxTopLogprobs, &top, &top_present));
  if (top_present && !wanted) {
    return InvalidField("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  }
  *out = wanted ? static_cast<int>(top) : -1;
  return absl::OkStatus();
}

absl::Status ReadMaxTokens(object o, std::string_view key, GenerateRequest& request) {
  return ReadInteger(o, key, 1, 1 << 24, &request.max_tokens);
}

// A message's content: a string, null, or a list of {"type": "text", "text": ...} parts
// joined with newlines (as llama.cpp's server joins them).
absl::StatusOr<std::string> ReadContent(element value, size_t index) {
  if (value.is_null()) return std::string();
  std::string_view text;
  if (!value.get(text)) return std::string(text);
  array parts;
  if (value.get(parts)) {
    return InvalidField(
        StrCat("messages[", index, "].content"),
        StrCat("messages[", index, "].content must be a string or a list of parts"));
  }
  std::string joined;
  for (element part : parts) {
    object fields;
    std::string_view type, part_text;
    if (part.get(fields) || fields["type"].get(type) || type != "text" ||
        fields["text"].get(part_text)) {
      return InvalidField(StrCat("messages[", index, "].content"),
                          StrCat("messages[", index,
                                 "].content: only parts {\"type\": \"text\", \"text\": ...} are "
                                 "supported"));
    }
    if (!joined.empty()) joined += '\n';
    joined.append(part_text);
  }
  return joined;
}

// An assistant message's tool_calls: [{"id", "type": "function", "function": {"name",
// "arguments"}}], at most kMaxToolCallsPerMessage.
absl::StatusOr<std::vector<ToolCall>> ReadHistoryCalls(array calls, size_t index) {
  const std::string field = StrCat("messages[", index, "].tool_calls");
  if (calls.size() > kMaxToolCallsPerMessage) {
    return InvalidField(field, StrCat(field, " may hold at most ", kMaxToolCallsPerMessage,
                                      " calls, got ", calls.size()));
  }
  std::vector<ToolCall> out;
  size_t i = 0;
  size_t bytes = 0;
  for (element item : calls) {
    const std::string where = StrCat(field, "[", i++, "]");
    object call, function;
    std::string_view id, type, name, arguments;
    if (item.get(call) || call["id"].get(id) || call["type"].get(type) || type != "function" ||
        call["function"].get(function) || function["name"].get(name) ||
        function["arguments"].get(arguments)) {
      return InvalidField(where, StrCat(where,
                                        " must be {\"id\", \"type\": \"function\", "
                                        "\"function\": {\"name\", \"arguments\": a string}}"));
    }
    if (id.size() > kMaxClientIdBytes || !IsToolName(name)) {
      return InvalidField(where, StrCat(where, ": an id of at most ", kMaxClientIdBytes,
                                        " bytes and a name matching ^[a-zA-Z0-9_-]{1,64}$"));
    }
    for (auto [key, value] : call) {
      if (key != "id" && key != "type" && key != "function" && !value.is_null()) {
        return InvalidField(StrCat(where, ".", key),
                            StrCat(where, ".", key, " is not supported by this server"));
      }
    }
    // Bounded before the arguments are parsed again to be written into the turn.
    bytes += arguments.size();
    RETURN_IF_ERROR(CheckPromptBytes(bytes, field));
    out.push_back(ToolCall{std::string(id), std::string(name), std::string(arguments)});
  }
  return out;
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void WriteUsage(Writer& w, const GenerationUsage& usage) {
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(usage.prompt_tokens);
  w.Key("completion_tokens");
  w.Int64(usage.completion_tokens);
  w.Key("total_tokens");
  w.Int64(usage.prompt_tokens + usage.completion_tokens);
  w.Key("prompt_tokens_details");
  w.StartObject();
  w.Key("cached_tokens");
  w.Int64(usage.cached_prompt_tokens);
  w.EndObject();
  w.EndObject();
}

// The fields every OpenAI reply and chunk starts with.
void WriteOpenAiHead(Writer& w, const GenerationCall& call, bool chunk) {
  w.Key("id");
  String(w, call.id);
  w.Key("object");
  if (call.api == GenerationApi::kChat) {
    String(w, chunk ? "chat.completion.chunk" : "chat.completion");
  } else {
    String(w, "text_completion");
  }
  w.Key("created");
  w.Int64(call.created);
  w.Key("model");
  String(w, call.model);
}

void WriteKServeHead(Writer& w, const GenerationCall& call) {
  w.Key("model_name");
  String(w, call.model);
  w.Key("model_version");
  String(w, call.model_version);
  if (!call.id.empty()) {
    w.Key("id");
    String(w, call.id);
  }
}

void TokenBytes(Writer& w, std::string_view token) {
  w.StartArray();
  for (unsigned char byte : token) w.Uint(byte);
  w.EndArray();
}

// Chat's logprobs object: {"content": [{"token", "logprob", "bytes", "top_logprobs"}]}. A
// token's text may end inside a UTF-8 character: "token" then holds the valid prefix with
// U+FFFD (the JSON writer's replacement) and "bytes" the exact bytes, as OpenAI's do.
void WriteChatLogprobs(Writer& w, std::span<const TokenLogprob> logprobs) {
  w.StartObject();
  w.Key("content");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) {
    w.StartObject();
    w.Key("token");
    String(w, entry.token);
    w.Key("logprob");
    w.Double(entry.logprob);
    w.Key("bytes");
    TokenBytes(w, entry.token);
    w.Key("top_logprobs");
    w.StartArray();
    for (const auto& [token, logprob] : entry.top) {
      w.StartObject();
      w.Key("token");
      String(w, token);
      w.Key("logprob");
      w.Double(logprob);
      w.Key("bytes");
      TokenBytes(w, token);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("refusal");
  w.Null();
  w.EndObject();
}

// The completions API's logprobs: parallel lists of tokens, their logprobs, a {token: logprob}
// map of alternatives per token, and each token's byte offset in the choice's text
// (`text_offset`, counted from `offset`).
void WriteCompletionLogprobs(Writer& w, std::span<const TokenLogprob> logprobs, size_t offset) {
  w.StartObject();
  w.Key("tokens");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) String(w, entry.token);
  w.EndArray();
  w.Key("token_logprobs");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) w.Double(entry.logprob);
  w.EndArray();
  w.Key("top_logprobs");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) {
    w.StartObject();
    std::vector<std::string_view> seen;
    for (const auto& [token, logprob] : entry.top) {
      // Two token ids can share a text; a JSON object keeps the likelier (first) one.
      if (std::find(seen.begin(), seen.end(), token) != seen.end()) continue;
      seen.push_back(token);
      w.Key(token.data(), static_cast<rapidjson::SizeType>(token.size()));
      w.Double(logprob);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("text_offset");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) {
    w.Uint64(offset);
    offset += entry.token.size();
  }
  w.EndArray();
  w.EndObject();
}

void WriteLogprobs(Writer& w, const GenerationCall& call, std::span<const TokenLogprob> logprobs,
                   size_t offset) {
  w.Key("logprobs");
  if (!call.logprobs) {
    w.Null();
  } else if (call.api == GenerationApi::kChat) {
    WriteChatLogprobs(w, logprobs);
  } else {
    WriteCompletionLogprobs(w, logprobs, offset);
  }
}

std::string Event(const rapidjson::StringBuffer& buffer) {
  std::string event = "data: ";
  event.append(buffer.GetString(), buffer.GetSize());
  event += "\n\n";
  return event;
}

// One OpenAI chunk with a single choice: `text` as the delta (or the role), and the finish
// reason when given.
std::string OpenAiChunk(const GenerationCall& call, int index, std::string_view text, bool role,
                        const FinishReason* finish, std::span<const TokenLogprob> logprobs = {},
                        size_t offset = 0) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteOpenAiHead(w, call, true);
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(index);
  if (call.api == GenerationApi::kChat) {
    w.Key("delta");
    w.StartObject();
    if (role) {
      w.Key("role");
      String(w, "assistant");
      w.Key("content");
      String(w, "");
    } else if (finish == nullptr) {
      w.Key("content");
      String(w, text);
    }
    w.EndObject();
  } else {
    w.Key("text");
    String(w, text);
  }
  if (role || finish != nullptr) {
    w.Key("logprobs");
    w.Null();
  } else {
    WriteLogprobs(w, call, logprobs, offset);
  }
  w.Key("finish_reason");
  if (finish != nullptr) {
    String(w, FinishReasonName(*finish));
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return Event(buffer);
}

// A chat message's content, or its tool_calls (content null), in OpenAI's shape.
void WriteToolReply(Writer& w, const ToolReply& reply) {
  w.Key("content");
  if (reply.calls.empty()) return String(w, reply.content);
  w.Null();
  w.Key("tool_calls");
  w.StartArray();
  for (const ToolCall& call : reply.calls) {
    w.StartObject();
    w.Key("id");
    String(w, call.id);
    w.Key("type");
    String(w, "function");
    w.Key("function");
    w.StartObject();
    w.Key("name");
    String(w, call.name);
    w.Key("arguments");
    String(w, call.arguments);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

// A chat chunk with one tool call of choice `index` (the call whole: its id, name and
// arguments in one delta), or, with `call` null, the choice's finish reason "tool_calls".
std::string ToolCallChunk(const GenerationCall& head, int index, const ToolCall* call,
                          int call_index) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteOpenAiHead(w, head, true);
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(index);
  w.Key("delta");
  w.StartObject();
  if (call != nullptr) {
    w.Key("tool_calls");
    w.StartArray();
    w.StartObject();
    w.Key("index");
    w.Int(call_index);
    w.Key("id");
    String(w, call->id);
    w.Key("type");
    String(w, "function");
    w.Key("function");
    w.StartObject();
    w.Key("name");
    String(w, call->name);
    w.Key("arguments");
    String(w, call->arguments);
    w.EndObject();
    w.EndObject();
    w.EndArray();
  }
  w.EndObject();
  w.Key("logprobs");
  w.Null();
  w.Key("finish_reason");
  if (call == nullptr) {
    String(w, "tool_calls");
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return Event(buffer);
}

}  // namespace

absl::Status CheckPromptBytes(size_t bytes, std::string_view field) {
  if (bytes <= kMaxPromptBytes) return absl::OkStatus();
  // More than any model's context holds.
  return WithErrorReason(
      InvalidField(field, StrCat("the prompt has ", bytes, " bytes; the server takes at most ",
                                 kMaxPromptBytes, " bytes of prompt text")),
      ErrorReason::kContextLengthExceeded);
}

absl::StatusOr<std::vector<ChatMessage>> ParseChatMessages(object o) {
  array messages;
  if (o["messages"].get(messages)) {
    return InvalidField("messages", "'messages' is required: a list of {\"role\", \"content\"}");
  }
  if (messages.size() == 0) return InvalidField("messages", "'messages' must not be empty");
  if (messages.size() > kMaxMessages) {
    return InvalidField("messages",
                        StrCat("at most ", kMaxMessages, " messages, got ", messages.size()));
  }
  std::vector<ChatMessage> out;
  size_t index = 0;
  size_t bytes = 0;
  // The functions of the calls seen so far, by id: a tool message names only its call.
  std::vector<std::pair<std::string, std::string>> call_names;
  for (element item : messages) {
    object message;
    std::string_view role;
    if (item.get(message) || message["role"].get(role)) {
      return InvalidField(StrCat("messages[", index, "].role"),
                          StrCat("messages[", index, "] must be an object with a string 'role'"));
    }
    for (auto [key, value] : message) {
      if (key == "role" || key == "content" || value.is_null()) continue;
      if (role == "assistant" && key == "tool_calls") continue;
      if (role == "tool" && (key == "tool_call_id" || key == "name")) continue;
      return InvalidField(StrCat("messages[", index, "].", key),
                          StrCat("messages[", index, "].", key,
                                 " is not supported by this server (a message has a role and a "
                                 "content; an assistant's may have tool_calls, a tool's a "
                                 "tool_call_id); remove it rather than have it ignored"));
    }
    element content;
    std::string text;
    if (!message["content"].get(content)) {
      ASSIGN_OR_RETURN(text, ReadContent(content, index));
    }
    std::string out_role(role);
    array calls;
    if (role == "assistant" && !message["tool_calls"].get(calls)) {
      ASSIGN_OR_RETURN(std::vector<ToolCall> read, ReadHistoryCalls(calls, index));
      for (const ToolCall& call : read) call_names.emplace_back(call.id, call.name);
      if (!read.empty()) text = ToolCallsTurn(read, text);
    } else if (role == "tool") {
      std::string_view id;
      if (message["tool_call_id"].get(id) || id.size() > kMaxClientIdBytes) {
        return InvalidField(StrCat("messages[", index, "].tool_call_id"),
                            StrCat("messages[", index,
                                   "].tool_call_id is required with role tool: "
                                   "the id of the call answered, at most ",
                                   kMaxClientIdBytes, " bytes"));
      }
      std::string_view name;
      if (message["name"].get(name)) {
        for (const auto& [call_id, call_name] : call_names) {
          if (call_id == id) name = call_name;
        }
      }
      // A template that knows no tools knows no tool role: the result is a user turn.
      text = ToolResultTurn(id, name.substr(0, 64), text);
      out_role = "user";
    }
    bytes += text.size() + out_role.size();
    RETURN_IF_ERROR(CheckPromptBytes(bytes, "messages"));
    out.push_back(ChatMessage{std::move(out_role), std::move(text)});
    ++index;
  }
  return out;
}

absl::StatusOr<ParsedGeneration> ParseOpenAiRequest(element body, GenerationApi api) {
  object o;
  if (body.get(o)) return Invalid("the request body must be a JSON object");
  ParsedGeneration parsed;
  parsed.call.api = api;
  parsed.call.created = NowSeconds();
  parsed.request = std::make_unique<GenerateRequest>();
  GenerateRequest& request = *parsed.request;
  std::string_view model;
  if (o["model"].get(model) || model.empty()) {
    return InvalidField(
        "model", "'model' is required: the name of a model this server serves (GET /v1/models)");
  }
  parsed.call.model = std::string(model);
  static constexpr std::string_view kChatFields[] = {"model",
                                                     "messages",
                                                     "n",
                                                     "stream",
                                                     "stream_options",
                                                     "max_tokens",
                                                     "max_completion_tokens",
                                                     "response_format",
                                                     "grammar",
                                                     "logprobs",
                                                     "top_logprobs",
                                                     "tools",
                                                     "tool_choice",
                                                     "parallel_tool_calls"};
  static constexpr std::string_view kCompletionFields[] = {
      "model",      "prompt",          "n",       "stream",  "stream_options",
      "max_tokens", "response_format", "grammar", "logprobs"};
  if (api == GenerationApi::kChat) {
    RETURN_IF_ERROR(CheckFields(o, kChatFields, ""));
  } else {
    RETURN_IF_ERROR(CheckFields(o, kCompletionFields, ""));
  }
  int64_t n = 1;
  RETURN_IF_ERROR(ReadInteger(o, "n", 1, kMaxChoices, &n));
  parsed.call.n = static_cast<int>(n);
  RETURN_IF_ERROR(ReadBool(o, "stream", &parsed.call.stream));
  object stream_options;
  if (!o["stream_options"].get(stream_options)) {
    static constexpr std::string_view kStreamOptions[] = {"include_usage"};
    RETURN_IF_ERROR(CheckFields(stream_options, kStreamOptions, " in 'stream_options'"));
    RETURN_IF_ERROR(ReadBool(stream_options, "include_usage", &parsed.call.include_usage));
  }
  RETURN_IF_ERROR(ReadSampling(o, request));
  RETURN_IF_ERROR(ReadOutputFormat(o, &request.output_format));
  RETURN_IF_ERROR(ReadLogprobs(o, api, &request.logprobs));
  parsed.call.logprobs = request.logprobs >= 0;
  if (api == GenerationApi::kChat) {
    RETURN_IF_ERROR(ReadMaxTokens(o, "max_tokens", request));
    RETURN_IF_ERROR(ReadMaxTokens(o, "max_completion_tokens", request));
    ASSIGN_OR_RETURN(request.messages, ParseChatMessages(o));
    request.chat = true;
    ASSIGN_OR_RETURN(ToolSet tools, ReadOpenAiTools(o));
    if (tools.active()) {
      if (parsed.call.logprobs) {
        return InvalidField("logprobs",
                            "'logprobs' cannot be combined with 'tools' (the tokens "
                            "would be the tool format's JSON)");
      }
      RETURN_IF_ERROR(ApplyTools(tools, request));
      parsed.call.tools = std::make_shared<const ToolSet>(std::move(tools));
    }
    parsed.call.id = "chatcmpl-";
  } else {
    // OpenAI's default for completions.
    request.max_tokens = 16;
    RETURN_IF_ERROR(ReadMaxTokens(o, "max_tokens", request));
    element prompt;
    if (o["prompt"].get(prompt)) return InvalidField("prompt", "'prompt' is required");
    std::string_view text;
    array list;
    if (!prompt.get(list)) {
      if (list.size() != 1 || list.at(0).get(text)) {
        return InvalidField("prompt",
                            "'prompt' must be a string (or a list of exactly one string)");
      }
    } else if (prompt.get(text)) {
      return InvalidField("prompt", "'prompt' must be a string");
    }
    RETURN_IF_ERROR(CheckPromptBytes(text.size(), "prompt"));
    request.prompt = std::string(text);
    parsed.call.id = "cmpl-";
  }
  return parsed;
}

absl::StatusOr<ParsedGeneration> ParseKServeGenerate(element body, bool stream) {
  object o;
  if (body.get(o)) return Invalid("the request body must be a JSON object");
  ParsedGeneration parsed;
  parsed.call.api = GenerationApi::kKServe;
  parsed.call.stream = stream;
  parsed.request = std::make_unique<GenerateRequest>();
  GenerateRequest& request = *parsed.request;
  std::string_view text;
  if (o["text_input"].get(text)) return Invalid("'text_input' is required: the prompt, a string");
  RETURN_IF_ERROR(CheckPromptBytes(text.size(), "text_input"));
  request.prompt = std::string(text);
  std::string_view id;
  if (!o["id"].get(id)) {
    // Echoed into every event of a stream: bounded (core/backend/infer_request.h).
    if (id.size() > kMaxClientIdBytes) {
      return Invalid(
          StrCat("'id' is ", id.size(), " bytes; at most ", kMaxClientIdBytes, " are allowed"));
    }
    parsed.call.id = std::string(id);
    request.id = parsed.call.id;
  }
  object parameters;
  // The parameters stand in "parameters", or at the top level (as Triton's clients send them),
  // not both: a field in the other place would be ignored.
  static constexpr std::string_view kFlatFields[] = {"text_input", "id", "max_tokens", "stream"};
  static constexpr std::string_view kNestedFields[] = {"text_input", "id", "parameters"};
  static constexpr std::string_view kParameterFields[] = {"max_tokens", "stream"};
  if (o["parameters"].get(parameters)) {
    RETURN_IF_ERROR(CheckFields(o, kFlatFields, ""));
    parameters = o;
  } else {
    RETURN_IF_ERROR(CheckFields(o, kNestedFields, "", /*sampling=*/false));
    RETURN_IF_ERROR(CheckFields(parameters, kParameterFields, " in 'parameters'"));
  }
  // "stream" is the endpoint's (generate or generate_stream); a body that says otherwise is
  // refused rather than ignored.
  bool stream_asked = stream;
  RETURN_IF_ERROR(ReadBool(parameters, "stream", &stream_asked));
  if (stream_asked != stream) {
    return Invalid(StrCat("'stream' is ", stream_asked ? "true" : "false", ", but ",
                          stream ? "generate_stream always streams"
                                 : "generate never streams (use generate_stream)"));
  }
  RETURN_IF_ERROR(ReadSampling(parameters, request));
  RETURN_IF_ERROR(ReadMaxTokens(parameters, "max_tokens", request));
  return parsed;
}

GenerationUsage TotalUsage(std::span<const GenerationChoice> choices) {
  GenerationUsage total;
  for (const GenerationChoice& choice : choices) {
    total.prompt_tokens = std::max(total.prompt_tokens, choice.done.usage.prompt_tokens);
    total.cached_prompt_tokens =
        std::max(total.cached_prompt_tokens, choice.done.usage.cached_prompt_tokens);
    total.completion_tokens += choice.done.usage.completion_tokens;
  }
  return total;
}

HttpReply EncodeGenerationReply(const GenerationCall& call,
                                std::span<const GenerationChoice> choices) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (call.api == GenerationApi::kKServe) {
    const GenerationChoice& only = choices.front();
    WriteKServeHead(w, call);
    w.Key("text_output");
    String(w, only.text);
    w.Key("finish_reason");
    String(w, FinishReasonName(only.done.finish_reason));
    WriteUsage(w, only.done.usage);
  } else {
    WriteOpenAiHead(w, call, false);
    w.Key("choices");
    w.StartArray();
    int index = 0;
    for (const GenerationChoice& choice : choices) {
      w.StartObject();
      w.Key("index");
      w.Int(index++);
      std::string_view finish = FinishReasonName(choice.done.finish_reason);
      if (call.api == GenerationApi::kChat) {
        w.Key("message");
        w.StartObject();
        w.Key("role");
        String(w, "assistant");
        if (call.tools != nullptr) {
          const ToolReply reply = ParseToolReply(choice.text, "call_");
          WriteToolReply(w, reply);
          if (!reply.calls.empty()) finish = "tool_calls";
        } else {
          w.Key("content");
          String(w, choice.text);
        }
        w.EndObject();
      } else {
        w.Key("text");
        String(w, choice.text);
      }
      WriteLogprobs(w, call, choice.logprobs, 0);
      w.Key("finish_reason");
      String(w, finish);
      w.EndObject();
    }
    w.EndArray();
    WriteUsage(w, TotalUsage(choices));
  }
  w.EndObject();
  HttpReply reply;
  reply.body = Body(buffer);
  return reply;
}

std::string EncodeStreamStart(const GenerationCall& call, int index) {
  if (call.api != GenerationApi::kChat) return {};
  return OpenAiChunk(call, index, {}, /*role=*/true, nullptr);
}

std::string EncodeStreamText(const GenerationCall& call, std::string_view text, int index,
                             std::span<const TokenLogprob> logprobs, size_t offset) {
  if (call.api != GenerationApi::kKServe) {
    return OpenAiChunk(call, index, text, false, nullptr, logprobs, offset);
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteKServeHead(w, call);
  w.Key("text_output");
  String(w, text);
  w.EndObject();
  return Event(buffer);
}

std::string EncodeStreamChoiceEnd(const GenerationCall& call, const GenerationEvent& done,
                                  int index, size_t offset) {
  if (call.api == GenerationApi::kKServe) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    WriteKServeHead(w, call);
    w.Key("text_output");
    String(w, done.text);
    w.Key("finish_reason");
    String(w, FinishReasonName(done.finish_reason));
    WriteUsage(w, done.usage);
    w.EndObject();
    return Event(buffer);
  }
  std::string events;
  if (!done.text.empty() || !done.logprobs.empty()) {
    events += OpenAiChunk(call, index, done.text, false, nullptr, done.logprobs, offset);
  }
  events += OpenAiChunk(call, index, {}, false, &done.finish_reason);
  return events;
}

std::string EncodeStreamToolChoiceEnd(const GenerationCall& call, std::string_view text,
                                      const GenerationEvent& done, int index) {
  const ToolReply reply = ParseToolReply(text, "call_");
  std::string events;
  if (reply.calls.empty()) {
    if (!reply.content.empty()) events += OpenAiChunk(call, index, reply.content, false, nullptr);
    return events + OpenAiChunk(call, index, {}, false, &done.finish_reason);
  }
  int call_index = 0;
  for (const ToolCall& tool_call : reply.calls) {
    events += ToolCallChunk(call, index, &tool_call, call_index++);
  }
  return events + ToolCallChunk(call, index, nullptr, 0);
}

std::string EncodeStreamFinish(const GenerationCall& call, const GenerationUsage& usage) {
  if (call.api == GenerationApi::kKServe) return {};
  std::string events;
  if (call.include_usage) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    WriteOpenAiHead(w, call, true);
    w.Key("choices");
    w.StartArray();
    w.EndArray();
    WriteUsage(w, usage);
    w.EndObject();
    events += Event(buffer);
  }
  events += "data: [DONE]\n\n";
  return events;
}

std::string EncodeStreamEnd(const GenerationCall& call, const GenerationEvent& done) {
  return EncodeStreamChoiceEnd(call, done, 0) + EncodeStreamFinish(call, done.usage);
}

std::string EncodeStreamError(const GenerationCall& call, const absl::Status& status) {
  HttpReply reply = GenerationErrorReply(call.api, status);
  std::string event = "data: " + reply.body + "\n\n";
  if (call.api != GenerationApi::kKServe) event += "data: [DONE]\n\n";
  return event;
}

HttpReply GenerationErrorReply(GenerationApi api, const absl::Status& status) {
  return api == GenerationApi::kKServe ? ErrorReply(status) : OpenAiErrorReply(status);
}

}  // namespace inferd
