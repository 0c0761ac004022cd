// A chat model's own tool-call format, as llama.cpp's server gives it with --jinja: llama.cpp's
// chat-format layer (common/chat.*, compiled from the same release as the engine) renders the
// tools and the history's tool calls and results with the model's own chat template
// (Hermes/Qwen2.5 `<tool_call>{...}</tool_call>`, Llama 3.x, Mistral, ...), gives the grammar
// that holds the reply to that template's call syntax (lazy for tool_choice auto: free text
// until the template's call marker, then the grammar; from the first token for required or a
// named function, the call first: llama.cpp's grammar would let text precede the calls) and
// parses the reply back into text and calls.
//
// A template that does not know tools (no `tools` variable it renders, no tool calls in its
// history) has no format of its own: knows_tools() is false and the caller keeps the generic
// format of frontends/http/codecs/generation_codec_tools.h.
//
// The request's bounds (tool count, names, schema sizes) are the frontend's, checked before
// anything reaches this; Apply refuses only what the template itself rejects.
//
// Thread-safety: const after Create; Apply and Parse may run on several threads at once. Both
// cost time in proportion to the history and the schemas: the engine's preparation thread,
// never an I/O or the decode thread (docs/inference-path.md).
#ifndef INFERD_BACKENDS_LLAMA_CHAT_TOOL_FORMAT_H_
#define INFERD_BACKENDS_LLAMA_CHAT_TOOL_FORMAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

struct llama_model;
struct llama_sampler;
struct llama_vocab;

namespace inferd {

// One function a request offers. `parameters`: its JSON schema, as text.
struct ChatTool {
  std::string name;
  std::string description;
  std::string parameters;
};

// One call, in a reply or in the history. `arguments`: a JSON object, as text.
struct ChatToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

// A message of the history: the assistant's carries its calls, a `tool` message the result of
// the call `tool_call_id` (of the function `tool_name`, when the client said).
struct ChatTurn {
  ChatTurn() = default;
  ChatTurn(std::string role, std::string content)
      : role(std::move(role)), content(std::move(content)) {}

  std::string role;
  std::string content;
  std::vector<ChatToolCall> tool_calls;
  std::string tool_call_id;
  std::string tool_name;
};

// How the model may use the tools. kNamed: it must call `named` (the only tool the template
// is then shown, as llama.cpp's server does).
enum class ChatToolChoice { kAuto, kRequired, kNamed };

struct ChatToolRequest {
  std::vector<ChatTool> tools;
  ChatToolChoice choice = ChatToolChoice::kAuto;
  std::string named;
  bool parallel = true;
};

// What the template made of one request: its prompt and how the reply is held and read back.
struct ChatToolPrompt {
  std::string prompt;
  // GBNF (start rule "root") of the template's call syntax; empty: the reply is free text.
  std::string grammar;
  // The grammar applies from the first match of a trigger on (auto); else from the first token.
  bool grammar_lazy = false;
  // Regular expressions (llama_sampler_init_grammar_lazy_patterns) that start a lazy grammar.
  std::vector<std::string> trigger_patterns;
  // Text the template opened the assistant's turn with, which a grammar held from the first
  // token must be fed first (the grammar's start includes it).
  std::string generation_prompt;
  // Strings that end the reply besides the model's end-of-generation tokens.
  std::vector<std::string> stops;
  // Special-token texts the reply may hold (the call markers), to keep in the reply's text.
  std::vector<std::string> preserved_tokens;
  // llama.cpp's name of the format ("peg-native", ...), for logs and tests.
  std::string format_name;
  // The parser of this reply (llama.cpp's PEG arena, serialised), for ChatToolFormat::Parse.
  std::string parser;
  int format = 0;  // llama.cpp's common_chat_format
};

// The reply read back: its text (without the calls' syntax) and its calls, each given an id
// when the model wrote none.
struct ChatToolReply {
  std::string content;
  std::vector<ChatToolCall> calls;
};

class ChatToolFormat {
 public:
  // The format of `model`'s own chat template (tokenizer.chat_template, or its tool_use
  // variant). InvalidArgument when the template does not parse.
  static absl::StatusOr<std::unique_ptr<ChatToolFormat>> FromModel(const llama_model* model);
  // The format of the template `source`, with the texts of the vocabulary's BOS and EOS.
  static absl::StatusOr<std::unique_ptr<ChatToolFormat>> FromTemplate(const std::string& source,
                                                                      const std::string& bos,
                                                                      const std::string& eos);
  ~ChatToolFormat();

  // Whether the template renders tools and tool calls in its own way (decided once, at
  // Create, by llama.cpp's template analysis and a probe rendering with one tool).
  bool knows_tools() const { return knows_tools_; }

  // The prompt of `messages` with `tools` rendered by the template, and the reply's grammar.
  // InvalidArgument when the template rejects them (its raise_exception, a role it does not
  // know, a history it cannot render).
  absl::StatusOr<ChatToolPrompt> Apply(const std::vector<ChatTurn>& messages,
                                       const ChatToolRequest& tools) const;

  // `output`, the model's reply to `prompt`, read back. A reply that does not follow the
  // format (cut by max_tokens, or prose under auto) comes back whole as content.
  static ChatToolReply Parse(const ChatToolPrompt& prompt, std::string_view output,
                             std::string_view id_prefix);

 private:
  struct Templates;
  ChatToolFormat(std::unique_ptr<Templates> templates, bool knows_tools);
  static absl::StatusOr<std::unique_ptr<ChatToolFormat>> Finish(
      std::unique_ptr<Templates> templates);

  std::unique_ptr<Templates> templates_;
  bool knows_tools_ = false;
};

// `prompt`'s grammar compiled for `vocab`: lazy with its triggers, or held from the first
// token and already fed the generation prompt. Shared by a request's choices (TokenSampler
// clones it). Null when the prompt has no grammar; InvalidArgument naming `field` when
// llama.cpp cannot compile it.
absl::StatusOr<std::shared_ptr<const llama_sampler>> CompileToolGrammar(
    const llama_vocab* vocab, const ChatToolPrompt& prompt, std::string_view field);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_CHAT_TOOL_FORMAT_H_
