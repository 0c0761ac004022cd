// The "messages" of an OpenAI chat body: roles, contents (strings or text parts), and the
// tool calls and results of earlier turns, rendered as the model's turns.
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/backend/infer_request.h"
#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/codecs/request_fields.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr size_t kMaxMessages = 4096;

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

}  // namespace

absl::StatusOr<std::vector<ChatMessage>> ParseChatMessages(object o, std::vector<ToolTurn>* turns) {
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
    ToolTurn turn;
    if (turns != nullptr) {
      turn.role = std::string(role);
      turn.content = text;
    }
    array calls;
    if (role == "assistant" && !message["tool_calls"].get(calls)) {
      ASSIGN_OR_RETURN(std::vector<ToolCall> read, ReadHistoryCalls(calls, index));
      for (const ToolCall& call : read) call_names.emplace_back(call.id, call.name);
      if (turns != nullptr) {
        for (const ToolCall& call : read) {
          turn.tool_calls.push_back(GeneratedToolCall{call.id, call.name, call.arguments});
        }
      }
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
      turn.tool_call_id = std::string(id);
      turn.tool_name = std::string(name.substr(0, 64));
      // A template that knows no tools knows no tool role: the result is a user turn.
      text = ToolResultTurn(id, name.substr(0, 64), text);
      out_role = "user";
    }
    bytes += text.size() + out_role.size();
    RETURN_IF_ERROR(CheckPromptBytes(bytes, "messages"));
    out.push_back(ChatMessage{std::move(out_role), std::move(text)});
    if (turns != nullptr) turns->push_back(std::move(turn));
    ++index;
  }
  return out;
}

}  // namespace inferd
