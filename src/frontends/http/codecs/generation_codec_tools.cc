#include "frontends/http/codecs/generation_codec_tools.h"

#include <algorithm>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/codecs/request_fields.h"
#include "observability/request_id.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// A function without parameters takes an empty object.
constexpr std::string_view kNoParameters = R"({"type":"object","properties":{}})";

void String(Writer& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

void Raw(Writer& w, std::string_view json) {
  w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

absl::Status Unsupported(const std::string& field) {
  return InvalidField(field, StrCat("'", field,
                                    "' is not supported by this server (docs/llm.md lists what "
                                    "is); remove it rather than have it ignored"));
}

absl::Status OnlyKeys(object o, std::span<const std::string_view> known, const std::string& where) {
  for (auto [key, value] : o) {
    if (value.is_null()) continue;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return Unsupported(StrCat(where, ".", key));
    }
  }
  return absl::OkStatus();
}

// One function: its name, description and parameters schema, from the fields of `o` (OpenAI's
// `function`, Anthropic's tool); `schema_key` is "parameters" or "input_schema".
absl::StatusOr<ToolFunction> ReadFunction(object o, const std::string& where,
                                          std::string_view schema_key) {
  ToolFunction function;
  std::string_view text;
  if (o["name"].get(text) || !IsToolName(text)) {
    return InvalidField(StrCat(where, ".name"),
                        StrCat("'", where,
                               ".name' is required and must match ^[a-zA-Z0-9_-]{1,64}$ (letters, "
                               "digits, _ and -)"));
  }
  function.name = std::string(text);
  element value;
  if (!o["description"].get(value) && !value.is_null()) {
    if (value.get(text) || text.size() > kMaxToolDescriptionBytes) {
      return InvalidField(StrCat(where, ".description"),
                          StrCat("'", where, ".description' must be a string of at most ",
                                 kMaxToolDescriptionBytes, " bytes"));
    }
    function.description = std::string(text);
  }
  function.parameters = std::string(kNoParameters);
  if (!o[schema_key].get(value) && !value.is_null()) {
    if (!value.is_object()) {
      return InvalidField(StrCat(where, ".", schema_key),
                          StrCat("'", where, ".", schema_key, "' must be a JSON schema object"));
    }
    function.parameters = simdjson::minify(value);
    if (function.parameters.size() > kMaxOutputFormatBytes) {
      return InvalidField(StrCat(where, ".", schema_key),
                          StrCat("'", where, ".", schema_key, "' is ", function.parameters.size(),
                                 " bytes; at most ", kMaxOutputFormatBytes, " are allowed"));
    }
  }
  return function;
}

absl::Status CheckNamed(const ToolSet& tools, std::string_view field) {
  for (const ToolFunction& f : tools.functions) {
    if (f.name == tools.named) return absl::OkStatus();
  }
  return InvalidField(field, StrCat("'", field, "' names the function '", tools.named.substr(0, 64),
                                    "', which is not among 'tools'"));
}

absl::Status CheckToolCount(size_t count) {
  if (count <= kMaxTools) return absl::OkStatus();
  return InvalidField("tools",
                      StrCat("'tools' may hold at most ", kMaxTools, " tools, got ", count));
}

absl::Status CheckUniqueNames(const ToolSet& tools) {
  for (size_t i = 0; i < tools.functions.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (tools.functions[i].name == tools.functions[j].name) {
        return InvalidField(StrCat("tools[", i, "]"), StrCat("'tools[", i, "]' repeats the name '",
                                                             tools.functions[i].name, "'"));
      }
    }
  }
  return absl::OkStatus();
}

// The schema of one call of `f`: {"name": f's name, "arguments": f's parameters}.
void WriteCallSchema(Writer& w, const ToolFunction& f) {
  w.StartObject();
  w.Key("type");
  String(w, "object");
  w.Key("properties");
  w.StartObject();
  w.Key("name");
  w.StartObject();
  w.Key("const");
  String(w, f.name);
  w.EndObject();
  w.Key("arguments");
  Raw(w, f.parameters);
  w.EndObject();
  w.Key("required");
  w.StartArray();
  String(w, "name");
  String(w, "arguments");
  w.EndArray();
  w.EndObject();
}

// A call of any function `tools` allows (all of them, or the named one).
void WriteAnyCallSchema(Writer& w, const ToolSet& tools) {
  std::vector<const ToolFunction*> allowed;
  for (const ToolFunction& f : tools.functions) {
    if (tools.choice != ToolChoice::kNamed || f.name == tools.named) allowed.push_back(&f);
  }
  if (allowed.size() == 1) return WriteCallSchema(w, *allowed.front());
  w.StartObject();
  w.Key("anyOf");
  w.StartArray();
  for (const ToolFunction* f : allowed) WriteCallSchema(w, *f);
  w.EndArray();
  w.EndObject();
}

void WriteCallsObjectSchema(Writer& w, const ToolSet& tools) {
  const std::string_view key = tools.parallel ? "tool_calls" : "tool_call";
  w.StartObject();
  w.Key("type");
  String(w, "object");
  w.Key("properties");
  w.StartObject();
  String(w, key);
  if (tools.parallel) {
    w.StartObject();
    w.Key("type");
    String(w, "array");
    w.Key("items");
    WriteAnyCallSchema(w, tools);
    w.Key("minItems");
    w.Int(1);
    w.EndObject();
  } else {
    WriteAnyCallSchema(w, tools);
  }
  w.EndObject();
  w.Key("required");
  w.StartArray();
  String(w, key);
  w.EndArray();
  w.EndObject();
}

std::string OutputSchema(const ToolSet& tools) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  if (tools.choice != ToolChoice::kAuto) {
    WriteCallsObjectSchema(w, tools);
  } else {
    w.StartObject();
    w.Key("anyOf");
    w.StartArray();
    WriteCallsObjectSchema(w, tools);
    w.StartObject();
    w.Key("type");
    String(w, "object");
    w.Key("properties");
    w.StartObject();
    w.Key("response");
    w.StartObject();
    w.Key("type");
    String(w, "string");
    w.EndObject();
    w.EndObject();
    w.Key("required");
    w.StartArray();
    String(w, "response");
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

// The system prompt's part that tells the model the tools and the reply format.
std::string ToolsPrompt(const ToolSet& tools) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartArray();
  for (const ToolFunction& f : tools.functions) {
    w.StartObject();
    w.Key("name");
    String(w, f.name);
    if (!f.description.empty()) {
      w.Key("description");
      String(w, f.description);
    }
    w.Key("parameters");
    Raw(w, f.parameters);
    w.EndObject();
  }
  w.EndArray();
  std::string prompt =
      StrCat("You can call these tools (the JSON schema of each one's arguments):\n",
             std::string_view(buffer.GetString(), buffer.GetSize()), "\n");
  const std::string call = tools.parallel
                               ? R"({"tool_calls": [{"name": "<tool name>", "arguments": {...}}]})"
                               : R"({"tool_call": {"name": "<tool name>", "arguments": {...}}})";
  switch (tools.choice) {
    case ToolChoice::kAuto:
      prompt += StrCat("Respond in JSON: ", call,
                       " to call tools, or {\"response\": \"<your reply>\"} to reply to the user.");
      break;
    case ToolChoice::kRequired:
      prompt += StrCat("Respond in JSON, calling tools: ", call);
      break;
    case ToolChoice::kNamed:
      prompt += StrCat("Respond in JSON, calling the tool ", tools.named, ": ", call);
      break;
    case ToolChoice::kNone:
      break;
  }
  return prompt;
}

void WriteCall(Writer& w, const ToolCall& call) {
  w.StartObject();
  w.Key("name");
  String(w, call.name);
  w.Key("arguments");
  // Arguments a client wrote that are not JSON stay a string.
  simdjson::dom::parser parser;
  element parsed;
  if (!parser.parse(call.arguments).get(parsed) && parsed.is_object()) {
    Raw(w, simdjson::minify(parsed));
  } else {
    String(w, call.arguments);
  }
  w.EndObject();
}

}  // namespace

bool IsToolName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

absl::StatusOr<ToolSet> ReadOpenAiTools(object body) {
  ToolSet tools;
  element value;
  if (!body["tools"].get(value) && !value.is_null()) {
    array list;
    if (value.get(list)) {
      return InvalidField("tools", "'tools' must be a list of {\"type\": \"function\", ...}");
    }
    RETURN_IF_ERROR(CheckToolCount(list.size()));
    size_t index = 0;
    for (element item : list) {
      const std::string where = StrCat("tools[", index++, "]");
      object tool;
      std::string_view type;
      if (item.get(tool) || tool["type"].get(type)) {
        return InvalidField(where, StrCat("'", where, "' must be an object with a 'type'"));
      }
      if (type != "function") {
        return InvalidField(StrCat(where, ".type"),
                            StrCat("'", where, ".type' '", type.substr(0, 64),
                                   "' is not supported (only 'function' is)"));
      }
      static constexpr std::string_view kToolKeys[] = {"type", "function"};
      RETURN_IF_ERROR(OnlyKeys(tool, kToolKeys, where));
      object function;
      if (tool["function"].get(function)) {
        return InvalidField(StrCat(where, ".function"),
                            StrCat("'", where, ".function' is required: {\"name\", ...}"));
      }
      // Every schema is enforced exactly: "strict" may say so, or not.
      static constexpr std::string_view kFunctionKeys[] = {"name", "description", "parameters",
                                                           "strict"};
      RETURN_IF_ERROR(OnlyKeys(function, kFunctionKeys, StrCat(where, ".function")));
      element strict;
      if (!function["strict"].get(strict) && !strict.is_null() && !strict.is_bool()) {
        return InvalidField(StrCat(where, ".function.strict"),
                            StrCat("'", where, ".function.strict' must be true or false"));
      }
      ASSIGN_OR_RETURN(ToolFunction f,
                       ReadFunction(function, StrCat(where, ".function"), "parameters"));
      tools.functions.push_back(std::move(f));
    }
    RETURN_IF_ERROR(CheckUniqueNames(tools));
  }
  if (!body["parallel_tool_calls"].get(value) && !value.is_null()) {
    if (value.get(tools.parallel)) {
      return InvalidField("parallel_tool_calls", "'parallel_tool_calls' must be true or false");
    }
  }
  if (body["tool_choice"].get(value) || value.is_null()) return tools;
  std::string_view mode;
  object named;
  if (!value.get(mode)) {
    if (mode == "none") {
      tools.choice = ToolChoice::kNone;
    } else if (mode == "auto") {
      tools.choice = ToolChoice::kAuto;
    } else if (mode == "required") {
      tools.choice = ToolChoice::kRequired;
    } else {
      return InvalidField("tool_choice",
                          StrCat("'tool_choice' '", mode.substr(0, 64),
                                 "' is not one of none, auto, required or {\"type\": "
                                 "\"function\", \"function\": {\"name\"}}"));
    }
  } else {
    std::string_view type, name;
    object function;
    if (value.get(named) || named["type"].get(type) || type != "function" ||
        named["function"].get(function) || function["name"].get(name)) {
      return InvalidField("tool_choice",
                          "'tool_choice' must be none, auto, required or {\"type\": \"function\", "
                          "\"function\": {\"name\": ...}}");
    }
    static constexpr std::string_view kChoiceKeys[] = {"type", "function"};
    RETURN_IF_ERROR(OnlyKeys(named, kChoiceKeys, "tool_choice"));
    static constexpr std::string_view kNameKeys[] = {"name"};
    RETURN_IF_ERROR(OnlyKeys(function, kNameKeys, "tool_choice.function"));
    tools.choice = ToolChoice::kNamed;
    tools.named = std::string(name);
  }
  if (tools.functions.empty() && tools.choice != ToolChoice::kNone &&
      tools.choice != ToolChoice::kAuto) {
    return InvalidField("tool_choice", "'tool_choice' asks for a tool call, but 'tools' is empty");
  }
  if (tools.choice == ToolChoice::kNamed) RETURN_IF_ERROR(CheckNamed(tools, "tool_choice"));
  return tools;
}

absl::StatusOr<ToolSet> ReadAnthropicTools(object body) {
  ToolSet tools;
  element value;
  if (!body["tools"].get(value) && !value.is_null()) {
    array list;
    if (value.get(list)) return InvalidField("tools", "tools: must be a list of {name, ...}");
    RETURN_IF_ERROR(CheckToolCount(list.size()));
    size_t index = 0;
    for (element item : list) {
      const std::string where = StrCat("tools[", index++, "]");
      object tool;
      if (item.get(tool)) return InvalidField(where, StrCat(where, ": must be an object"));
      std::string_view type = "custom";
      element type_value;
      if (!tool["type"].get(type_value) && !type_value.is_null() &&
          (type_value.get(type) || type != "custom")) {
        return InvalidField(StrCat(where, ".type"),
                            StrCat(where,
                                   ".type: only custom tools are supported (no server "
                                   "tools such as bash or web search)"));
      }
      static constexpr std::string_view kToolKeys[] = {"type", "name", "description",
                                                       "input_schema"};
      RETURN_IF_ERROR(OnlyKeys(tool, kToolKeys, where));
      element schema;
      if (tool["input_schema"].get(schema) || schema.is_null()) {
        return InvalidField(StrCat(where, ".input_schema"),
                            StrCat(where, ".input_schema: required, a JSON schema object"));
      }
      ASSIGN_OR_RETURN(ToolFunction f, ReadFunction(tool, where, "input_schema"));
      tools.functions.push_back(std::move(f));
    }
    RETURN_IF_ERROR(CheckUniqueNames(tools));
  }
  if (body["tool_choice"].get(value) || value.is_null()) return tools;
  object choice;
  std::string_view type;
  if (value.get(choice) || choice["type"].get(type)) {
    return InvalidField("tool_choice", "tool_choice: must be {\"type\": auto, any, tool or none}");
  }
  static constexpr std::string_view kChoiceKeys[] = {"type", "name", "disable_parallel_tool_use"};
  RETURN_IF_ERROR(OnlyKeys(choice, kChoiceKeys, "tool_choice"));
  element disable;
  if (!choice["disable_parallel_tool_use"].get(disable) && !disable.is_null()) {
    bool flag = false;
    if (disable.get(flag)) {
      return InvalidField("tool_choice.disable_parallel_tool_use",
                          "tool_choice.disable_parallel_tool_use: must be true or false");
    }
    tools.parallel = !flag;
  }
  std::string_view name;
  if (type == "auto") {
    tools.choice = ToolChoice::kAuto;
  } else if (type == "any") {
    tools.choice = ToolChoice::kRequired;
  } else if (type == "none") {
    tools.choice = ToolChoice::kNone;
  } else if (type == "tool") {
    if (choice["name"].get(name)) {
      return InvalidField("tool_choice.name", "tool_choice.name: required with type tool");
    }
    tools.choice = ToolChoice::kNamed;
    tools.named = std::string(name);
  } else {
    return InvalidField("tool_choice.type", StrCat("tool_choice.type: '", type.substr(0, 64),
                                                   "' is not one of auto, any, tool, none"));
  }
  if (type != "tool" && !choice["name"].get(value) && !value.is_null()) {
    return InvalidField("tool_choice.name", "tool_choice.name: only with type tool");
  }
  if (tools.functions.empty() && (type == "any" || type == "tool")) {
    return InvalidField("tool_choice", "tool_choice: asks for a tool call, but tools is empty");
  }
  if (tools.choice == ToolChoice::kNamed) RETURN_IF_ERROR(CheckNamed(tools, "tool_choice.name"));
  return tools;
}

absl::Status ApplyTools(const ToolSet& tools, GenerateRequest& request) {
  if (!tools.active()) return absl::OkStatus();
  if (request.output_format.kind != OutputFormat::Kind::kText) {
    return InvalidField("tools", StrCat("'tools' cannot be combined with '",
                                        OutputFormatField(request.output_format),
                                        "': the tool calls' format holds the output"));
  }
  std::string schema = OutputSchema(tools);
  if (schema.size() > kMaxOutputFormatBytes) {
    return InvalidField("tools", StrCat("the tools' schemas make a reply schema of ", schema.size(),
                                        " bytes; at most ", kMaxOutputFormatBytes,
                                        " are allowed (fewer tools or smaller schemas)"));
  }
  request.output_format.kind = OutputFormat::Kind::kJsonSchema;
  request.output_format.text = std::move(schema);
  request.output_format.field = "tools";
  const std::string prompt = ToolsPrompt(tools);
  std::vector<ChatMessage>& messages = request.messages;
  if (!messages.empty() &&
      (messages.front().role == "system" || messages.front().role == "developer")) {
    std::string& content = messages.front().content;
    if (!content.empty()) content += "\n\n";
    content += prompt;
  } else {
    messages.insert(messages.begin(), ChatMessage{"system", prompt});
  }
  return absl::OkStatus();
}

std::shared_ptr<const GenerationTools> ModelToolsOf(const ToolSet& tools,
                                                    std::vector<ToolTurn> turns,
                                                    std::string_view id_prefix) {
  auto out = std::make_shared<GenerationTools>();
  for (const ToolFunction& function : tools.functions) {
    out->functions.push_back(
        ToolDefinition{function.name, function.description, function.parameters});
  }
  switch (tools.choice) {
    case ToolChoice::kRequired:
      out->choice = GenerationTools::Choice::kRequired;
      break;
    case ToolChoice::kNamed:
      out->choice = GenerationTools::Choice::kNamed;
      break;
    case ToolChoice::kNone:  // not active: no tools reach the model
    case ToolChoice::kAuto:
      out->choice = GenerationTools::Choice::kAuto;
      break;
  }
  out->named = tools.named;
  out->parallel = tools.parallel;
  out->messages = std::move(turns);
  out->call_id_prefix = std::string(id_prefix);
  return out;
}

ToolReply ReadToolReply(std::string_view text, const GenerationEvent& done,
                        std::string_view id_prefix) {
  if (!done.tool_reply) return ParseToolReply(text, id_prefix);
  ToolReply reply;
  reply.content = done.tool_reply->content;
  for (const GeneratedToolCall& call : done.tool_reply->calls) {
    reply.calls.push_back(ToolCall{call.id, call.name, call.arguments});
  }
  return reply;
}

ToolReply ParseToolReply(std::string_view text, std::string_view id_prefix) {
  ToolReply reply;
  simdjson::dom::parser parser;
  object o;
  if (parser.parse(text.data(), text.size()).get(o)) {
    reply.content = std::string(text);
    return reply;
  }
  std::string_view response;
  if (!o["response"].get(response)) {
    reply.content = std::string(response);
    return reply;
  }
  auto add = [&](element item) {
    object call;
    std::string_view name;
    object arguments;
    if (item.get(call) || call["name"].get(name) || call["arguments"].get(arguments)) return;
    reply.calls.push_back(ToolCall{StrCat(id_prefix, NewRequestId().substr(0, 24)),
                                   std::string(name), simdjson::minify(arguments)});
  };
  array calls;
  element one;
  if (!o["tool_calls"].get(calls)) {
    for (element item : calls) add(item);
  } else if (!o["tool_call"].get(one)) {
    add(one);
  }
  if (reply.calls.empty()) reply.content = std::string(text);
  return reply;
}

std::string ToolCallsTurn(std::span<const ToolCall> calls, std::string_view content) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("tool_calls");
  w.StartArray();
  for (const ToolCall& call : calls) WriteCall(w, call);
  w.EndArray();
  if (!content.empty()) {
    w.Key("content");
    String(w, content);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string ToolResultTurn(std::string_view call_id, std::string_view name,
                           std::string_view content, bool is_error) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("tool_response");
  w.StartObject();
  if (!name.empty()) {
    w.Key("tool");
    String(w, name);
  }
  w.Key("tool_call_id");
  String(w, call_id);
  if (is_error) {
    w.Key("is_error");
    w.Bool(true);
  }
  w.Key("content");
  String(w, content);
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace inferd
