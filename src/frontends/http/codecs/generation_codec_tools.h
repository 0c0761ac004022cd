// Tool calling for the chat APIs (OpenAI's `tools`, Anthropic's `tools`), in one generic
// format any chat model can follow, as llama.cpp's generic chat handler does for templates
// that know no tools: the tool list is written into the system prompt, and the output is held
// by a JSON schema (compiled into a grammar by the model, as response_format's is) to
//   {"tool_calls": [{"name": "<tool>", "arguments": {...}}, ...]}   (parallel calls)
//   {"tool_call": {"name": "<tool>", "arguments": {...}}}            (one call)
//   {"response": "<text>"}                                           (auto: a plain reply)
// so a forced or required call always has a tool's name and arguments valid against that
// tool's parameters schema. The reply's JSON is turned back into the API's tool calls here.
// History (assistant tool calls, tool results) is written as the same JSON in the turns.
//
// Bounds: at most kMaxTools tools with names of OpenAI's pattern ^[a-zA-Z0-9_-]{1,64}$, each
// schema and their combined schema within kMaxOutputFormatBytes (whose depth the model's
// schema checks bound), at most kMaxToolCallsPerMessage calls in one history message.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_GENERATION_CODEC_TOOLS_H_
#define INFERD_FRONTENDS_HTTP_CODECS_GENERATION_CODEC_TOOLS_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/backend/generation.h"

namespace inferd {

inline constexpr size_t kMaxTools = 128;
inline constexpr size_t kMaxToolCallsPerMessage = 128;
inline constexpr size_t kMaxToolDescriptionBytes = 8 << 10;

struct ToolFunction {
  std::string name;
  std::string description;
  std::string parameters;  // a JSON schema object, minified
};

enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

// The tools of one request and how the model may use them. Immutable once parsed.
struct ToolSet {
  std::vector<ToolFunction> functions;
  ToolChoice choice = ToolChoice::kAuto;
  std::string named;     // kNamed: the function that must be called
  bool parallel = true;  // several calls in one reply ("tool_calls") or exactly one
  // Whether the output is held to the tool format (tools given and a choice other than none).
  bool active() const { return !functions.empty() && choice != ToolChoice::kNone; }
};

// One call, in a reply or in the history. `arguments`: a JSON object as text.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

// What the model's reply says: text, or calls (then `content` is empty).
struct ToolReply {
  std::string content;
  std::vector<ToolCall> calls;
};

// OpenAI: `tools`, `tool_choice`, `parallel_tool_calls` of a chat body.
absl::StatusOr<ToolSet> ReadOpenAiTools(simdjson::dom::object body);
// Anthropic: `tools` ({name, description, input_schema}) and `tool_choice` ({type: auto, any,
// tool, none; name; disable_parallel_tool_use}).
absl::StatusOr<ToolSet> ReadAnthropicTools(simdjson::dom::object body);

// Writes the tool list and the reply format into the request's system prompt (the first
// system or developer message, else a new one) and sets its output format to the schema of
// the calls `tools` allows. Does nothing when !tools.active(). InvalidArgument naming `tools`
// when the request already has an output format or the schema is over its limit.
absl::Status ApplyTools(const ToolSet& tools, GenerateRequest& request);

// The request's tools and history (`turns`, as the client sent them) for a model that renders
// them in its own format (GenerateRequest::tools), its calls' ids starting with `id_prefix`.
std::shared_ptr<const GenerationTools> ModelToolsOf(const ToolSet& tools,
                                                    std::vector<ToolTurn> turns,
                                                    std::string_view id_prefix);

// The reply of one choice: as the model read it back in its own format (done.tool_reply),
// else `text` read as ApplyTools' generic format (ParseToolReply).
ToolReply ReadToolReply(std::string_view text, const GenerationEvent& done,
                        std::string_view id_prefix);

// The reply `text` generated under ApplyTools' schema as text or calls (each given a new id
// starting with `id_prefix`: "call_", "toolu_"). Text that is not the format (cut by
// max_tokens) comes back whole as content.
ToolReply ParseToolReply(std::string_view text, std::string_view id_prefix);

// An assistant turn of the history with `calls` (and its `content`, may be empty), in the
// format the model is asked to answer in; and a tool's result, as the user turn that carries it.
std::string ToolCallsTurn(std::span<const ToolCall> calls, std::string_view content);
std::string ToolResultTurn(std::string_view call_id, std::string_view name,
                           std::string_view content, bool is_error = false);

// Whether `name` matches ^[a-zA-Z0-9_-]{1,64}$.
bool IsToolName(std::string_view name);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_GENERATION_CODEC_TOOLS_H_
