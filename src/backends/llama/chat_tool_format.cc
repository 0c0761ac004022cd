#include "backends/llama/chat_tool_format.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <llama.h>

// llama.cpp's chat-format layer (common/chat.h) and its JSON wrapper.
#include "chat.h"
#include "json.h"
#include "nlohmann/json.hpp"

#include "backends/llama/llama_log.h"
#include "backends/llama/sampler_chain.h"
#include "common/strings.h"

namespace inferd {
namespace {

// The probe that decides knows_tools(): a template that renders it in a way of its own gives
// a grammar for a required call.
constexpr char kProbeSchema[] =
    R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})";

std::string EscapeRegex(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (std::string_view(".^$|()*+?[]{}\\").find(c) != std::string_view::npos) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

// A forced call's grammar (required, a named function) with no free text before the call:
// llama.cpp's root is `<opening> space until-N? tool-calls`, where until-N is any text up to
// the call marker, which a model that was not trained on the template's syntax (SmolLM2
// under Qwen2.5's template) fills with prose until max_tokens. A root of another shape is
// kept as it is.
std::string CallFirst(std::string grammar) {
  size_t root = grammar.rfind("\nroot ::= ");
  root = grammar.starts_with("root ::= ") ? 0 : (root == std::string::npos ? root : root + 1);
  if (root == std::string::npos) return grammar;
  const size_t end = std::min(grammar.find('\n', root), grammar.size());
  const size_t until = grammar.find(" until-", root);
  if (until == std::string::npos || until >= end) return grammar;
  size_t i = until + 7;
  while (i < end && std::isdigit(static_cast<unsigned char>(grammar[i]))) ++i;
  if (i == until + 7 || i >= end || grammar[i] != '?') return grammar;
  grammar.erase(until, i + 1 - until);
  return grammar;
}

std::string NewCallId(std::string_view prefix) {
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 generator{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(generator)];
  return id;
}

common_chat_msg ToCommon(const ChatTurn& turn) {
  common_chat_msg message;
  message.role = turn.role;
  message.content = turn.content;
  message.tool_call_id = turn.tool_call_id;
  message.tool_name = turn.tool_name;
  for (const ChatToolCall& call : turn.tool_calls) {
    message.tool_calls.push_back(common_chat_tool_call{call.name, call.arguments, call.id});
  }
  return message;
}

}  // namespace

struct ChatToolFormat::Templates {
  common_chat_templates_ptr templates;
};

ChatToolFormat::ChatToolFormat(std::unique_ptr<Templates> templates, bool knows_tools)
    : templates_(std::move(templates)), knows_tools_(knows_tools) {}

ChatToolFormat::~ChatToolFormat() = default;

absl::StatusOr<std::unique_ptr<ChatToolFormat>> ChatToolFormat::FromModel(
    const llama_model* model) {
  // llama.cpp's layer reports a template it cannot parse by throwing.
  try {
    auto templates = std::make_unique<Templates>();
    templates->templates = common_chat_templates_init(model, "");
    return Finish(std::move(templates));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat("the chat template is not valid Jinja: ", e.what()));
  }
}

absl::StatusOr<std::unique_ptr<ChatToolFormat>> ChatToolFormat::FromTemplate(
    const std::string& source, const std::string& bos, const std::string& eos) {
  if (source.empty()) return absl::InvalidArgumentError("the chat template is empty");
  try {
    auto templates = std::make_unique<Templates>();
    templates->templates = common_chat_templates_init(nullptr, source, bos, eos);
    return Finish(std::move(templates));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat("the chat template is not valid Jinja: ", e.what()));
  }
}

absl::StatusOr<std::unique_ptr<ChatToolFormat>> ChatToolFormat::Finish(
    std::unique_ptr<Templates> templates) {
  // The template's own analysis (jinja::caps): whether it reads `tools` and renders an
  // assistant message's tool_calls.
  const std::map<std::string, bool> caps =
      common_chat_templates_get_caps(templates->templates.get());
  auto cap = [&caps](const char* name) {
    auto it = caps.find(name);
    return it != caps.end() && it->second;
  };
  bool knows = cap("supports_tools") && cap("supports_tool_calls");
  std::unique_ptr<ChatToolFormat> format(new ChatToolFormat(std::move(templates), knows));
  if (knows) {
    // And a probe: one tool, a required call, must give a grammar of the template's syntax.
    ChatToolRequest probe;
    probe.tools.push_back(ChatTool{"get_weather", "The weather in a city", kProbeSchema});
    probe.choice = ChatToolChoice::kRequired;
    absl::StatusOr<ChatToolPrompt> rendered = format->Apply({ChatTurn{"user", "Hello"}}, probe);
    format->knows_tools_ = rendered.ok() && !rendered->grammar.empty();
  }
  return format;
}

absl::StatusOr<ChatToolPrompt> ChatToolFormat::Apply(const std::vector<ChatTurn>& messages,
                                                     const ChatToolRequest& tools) const {
  common_chat_templates_inputs inputs;
  inputs.use_jinja = true;
  inputs.add_generation_prompt = true;
  inputs.reasoning_format = COMMON_REASONING_FORMAT_NONE;
  inputs.messages.reserve(messages.size());
  for (const ChatTurn& turn : messages) inputs.messages.push_back(ToCommon(turn));
  for (const ChatTool& tool : tools.tools) {
    if (tools.choice == ChatToolChoice::kNamed && tool.name != tools.named) continue;
    inputs.tools.push_back(common_chat_tool{tool.name, tool.description, tool.parameters});
  }
  inputs.tool_choice = tools.choice == ChatToolChoice::kAuto ? COMMON_CHAT_TOOL_CHOICE_AUTO
                                                             : COMMON_CHAT_TOOL_CHOICE_REQUIRED;
  inputs.parallel_tool_calls = tools.parallel;
  common_chat_params params;
  try {
    params = common_chat_templates_apply(templates_->templates.get(), inputs);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat("the model's chat template failed: ", e.what()));
  }
  ChatToolPrompt prompt;
  prompt.prompt = std::move(params.prompt);
  prompt.grammar = std::move(params.grammar);
  if (tools.choice != ChatToolChoice::kAuto) prompt.grammar = CallFirst(std::move(prompt.grammar));
  prompt.grammar_lazy = params.grammar_lazy;
  prompt.generation_prompt = std::move(params.generation_prompt);
  prompt.stops = std::move(params.additional_stops);
  prompt.preserved_tokens = std::move(params.preserved_tokens);
  prompt.format_name = common_chat_format_name(params.format);
  prompt.format = static_cast<int>(params.format);
  prompt.parser = std::move(params.parser);
  // As llama.cpp's sampler does (common/sampling.cpp), every trigger as a pattern.
  for (const common_grammar_trigger& trigger : params.grammar_triggers) {
    switch (trigger.type) {
      case COMMON_GRAMMAR_TRIGGER_TYPE_WORD:
      case COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN:
        prompt.trigger_patterns.push_back(EscapeRegex(trigger.value));
        break;
      case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN:
        prompt.trigger_patterns.push_back(trigger.value);
        break;
      case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL: {
        const std::string& p = trigger.value;
        prompt.trigger_patterns.push_back(
            p.empty() ? std::string("^$")
                      : StrCat(p.front() != '^' ? "^" : "", p, p.back() != '$' ? "$" : ""));
        break;
      }
    }
  }
  if (prompt.grammar_lazy && prompt.trigger_patterns.empty()) {
    return absl::InternalError("llama.cpp gave a lazy tool-call grammar without triggers");
  }
  return prompt;
}

ChatToolReply ChatToolFormat::Parse(const ChatToolPrompt& prompt, std::string_view output,
                                    std::string_view id_prefix) {
  ChatToolReply reply;
  common_chat_msg message;
  try {
    common_chat_parser_params params;
    params.format = static_cast<common_chat_format>(prompt.format);
    params.generation_prompt = prompt.generation_prompt;
    params.reasoning_format = COMMON_REASONING_FORMAT_NONE;
    params.parse_tool_calls = true;
    if (!prompt.parser.empty()) params.parser.load(prompt.parser);
    message = common_chat_parse(std::string(output), /*is_partial=*/false, params);
  } catch (const std::exception&) {
    // Not the template's format (a reply cut short): the text as it came.
    reply.content = std::string(output);
    return reply;
  }
  // llama.cpp's parser is lenient: a call cut short (max_tokens) comes back with its partial
  // arguments. A call is a call only with whole JSON-object arguments.
  for (const common_chat_tool_call& call : message.tool_calls) {
    const nlohmann::json arguments = nlohmann::json::parse(call.arguments, nullptr, false);
    if (call.name.empty() || !arguments.is_object()) {
      reply.content = std::string(output);
      return reply;
    }
  }
  reply.content = std::move(message.content);
  if (!message.reasoning_content.empty()) {
    reply.content = StrCat(message.reasoning_content, reply.content);
  }
  for (common_chat_tool_call& call : message.tool_calls) {
    reply.calls.push_back(ChatToolCall{call.id.empty() ? NewCallId(id_prefix) : call.id,
                                       std::move(call.name), std::move(call.arguments)});
  }
  return reply;
}

absl::StatusOr<std::shared_ptr<const llama_sampler>> CompileToolGrammar(
    const llama_vocab* vocab, const ChatToolPrompt& prompt, std::string_view field) {
  if (prompt.grammar.empty()) return std::shared_ptr<const llama_sampler>();
  LlamaErrorCapture capture;
  SamplerPtr grammar;
  try {
    if (prompt.grammar_lazy) {
      std::vector<const char*> patterns;
      for (const std::string& pattern : prompt.trigger_patterns)
        patterns.push_back(pattern.c_str());
      grammar.reset(llama_sampler_init_grammar_lazy_patterns(
          vocab, prompt.grammar.c_str(), "root", patterns.data(), patterns.size(), nullptr, 0));
    } else {
      grammar.reset(llama_sampler_init_grammar(vocab, prompt.grammar.c_str(), "root"));
      // The grammar's start is the text the template opened the turn with, already in the
      // prompt: fed here, as llama.cpp's sampler does.
      const std::string& text = prompt.generation_prompt;
      if (grammar != nullptr && !text.empty()) {
        const int32_t length = static_cast<int32_t>(text.size());
        std::vector<llama_token> tokens(text.size() + 2);
        int32_t n = llama_tokenize(vocab, text.data(), length, tokens.data(),
                                   static_cast<int32_t>(tokens.size()), false, true);
        if (n < 0) {
          tokens.resize(static_cast<size_t>(-n));
          n = llama_tokenize(vocab, text.data(), length, tokens.data(),
                             static_cast<int32_t>(tokens.size()), false, true);
        }
        tokens.resize(n > 0 ? static_cast<size_t>(n) : 0);
        for (size_t i = 0; i < tokens.size(); ++i) {
          char piece[256];
          const int32_t p = llama_token_to_piece(vocab, tokens[i], piece, sizeof(piece), 0, true);
          // Some tokenizers put a space before the first special token.
          if (i == 0 && p > 0 && std::isspace(static_cast<unsigned char>(piece[0])) &&
              !std::isspace(static_cast<unsigned char>(text[0]))) {
            continue;
          }
          llama_sampler_accept(grammar.get(), tokens[i]);
        }
      }
    }
  } catch (const std::exception& e) {
    capture.Add(e.what());
    grammar.reset();
  }
  if (grammar == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("'", field, "': llama.cpp could not compile the template's tool-call grammar",
               capture.errors().empty() ? std::string() : StrCat(" (", capture.errors(), ")")));
  }
  return std::shared_ptr<const llama_sampler>(grammar.release(), SamplerDeleter());
}

}  // namespace inferd
