#include "backends/llama/chat_template.h"

#include <exception>
#include <utility>

// llama.cpp's Jinja engine (common/jinja) and its JSON wrapper (common/json.h).
#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "jinja/runtime.h"
#include "jinja/value.h"
#include "json.h"

#include "common/strings.h"

namespace inferd {

struct ChatTemplate::Program {
  jinja::program program;
  std::string source;
};

ChatTemplate::ChatTemplate(std::unique_ptr<Program> program, std::string bos, std::string eos)
    : program_(std::move(program)), bos_token_(std::move(bos)), eos_token_(std::move(eos)) {}

ChatTemplate::~ChatTemplate() = default;

absl::StatusOr<std::unique_ptr<ChatTemplate>> ChatTemplate::Create(const std::string& source,
                                                                   std::string bos_token,
                                                                   std::string eos_token) {
  // The engine reports errors by throwing; this and Render are the places they are caught.
  try {
    auto program = std::make_unique<Program>();
    jinja::lexer lexer;
    jinja::lexer_result tokens = lexer.tokenize(source);
    program->program = jinja::parse_from_tokens(tokens);
    program->source = tokens.source;
    return std::unique_ptr<ChatTemplate>(
        new ChatTemplate(std::move(program), std::move(bos_token), std::move(eos_token)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat("the chat template is not valid Jinja: ", e.what()));
  }
}

absl::StatusOr<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages,
                                                 bool add_generation_prompt) const {
  try {
    // The variables llama.cpp's server passes (common_chat_template_direct_apply).
    common_json input = common_json::object();
    common_json list = common_json::array();
    for (const ChatMessage& message : messages) {
      common_json item = common_json::object();
      item["role"] = message.role;
      item["content"] = message.content;
      list.push_back(item);
    }
    input["messages"] = list;
    input["bos_token"] = bos_token_;
    input["eos_token"] = eos_token_;
    input["enable_thinking"] = true;
    if (add_generation_prompt) input["add_generation_prompt"] = true;
    jinja::context context(program_->source);
    jinja::global_from_json(context, input, /*mark_input=*/false);
    jinja::runtime runtime(context);
    const jinja::value result = runtime.execute(program_->program);
    return jinja::runtime::gather_string_parts(result)->as_string().str();
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat("the model's chat template failed: ", e.what()));
  }
}

}  // namespace inferd
