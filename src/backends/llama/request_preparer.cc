#include "backends/llama/request_preparer.h"

#include <optional>
#include <utility>

#include <llama.h>
#include <spdlog/spdlog.h>

#include "backends/llama/output_grammar.h"
#include "backends/llama/prompt_segments.h"
#include "backends/llama/sampler_chain.h"
#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// A prompt longer than the model's context, marked so (common/error_detail.h): the field
// at fault is the chat's messages or the raw prompt.
absl::Status PromptTooLong(const GenerateRequest& request, absl::Status status) {
  return WithErrorReason(WithErrorField(std::move(status), request.chat ? "messages" : "prompt"),
                         ErrorReason::kContextLengthExceeded);
}

}  // namespace

RequestPreparer::RequestPreparer(const llama_model* model, const Tokenizer& tokenizer,
                                 const LlamaOptions& options)
    : tokenizer_(tokenizer), options_(options) {
  const char* source = llama_model_chat_template(model, nullptr);
  if (source == nullptr) {
    template_status_ = absl::FailedPreconditionError(
        "the model file has no chat template (tokenizer.chat_template); use /v1/completions "
        "with a prompt instead");
    return;
  }
  const llama_vocab* vocab = tokenizer_.vocab();
  auto special = [vocab](llama_token token) {
    if (token == LLAMA_TOKEN_NULL) return std::string();
    char buffer[256];
    const int32_t n = llama_token_to_piece(vocab, token, buffer, sizeof(buffer), 0, true);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
  };
  absl::StatusOr<std::unique_ptr<ChatTemplate>> parsed = ChatTemplate::Create(
      source, special(llama_vocab_bos(vocab)), special(llama_vocab_eos(vocab)));
  if (parsed.ok()) {
    template_ = *std::move(parsed);
    absl::StatusOr<std::unique_ptr<ChatToolFormat>> tools = ChatToolFormat::FromModel(model);
    if (tools.ok() && (*tools)->knows_tools()) {
      tool_format_ = *std::move(tools);
    } else if (!tools.ok()) {
      spdlog::warn("llama: tools in the generic format: {}", std::string(tools.status().message()));
    }
  } else {
    template_status_ = parsed.status();
    spdlog::warn("llama: {}", std::string(template_status_.message()));
  }
}

RequestPreparer::~RequestPreparer() = default;

absl::Status RequestPreparer::Check(const GenerateRequest& request) const {
  const int n = request.n;
  if (n < 1 || n > kMaxChoices) {
    return absl::InvalidArgumentError(
        StrCat("'n' must be between 1 and ", kMaxChoices, ", got ", n));
  }
  const size_t bytes = PromptBytes(request);
  const size_t most = static_cast<size_t>(options_.context_length) * tokenizer_.max_token_bytes();
  if (bytes > most) {
    return PromptTooLong(
        request, absl::InvalidArgumentError(
                     StrCat("the prompt is ", bytes, " bytes; a sequence of this model holds ",
                            options_.context_length,
                            " tokens (parameters.context_length), and no prompt of more than ",
                            most, " bytes fits in that many of its tokens")));
  }
  const int32_t vocabulary = tokenizer_.vocabulary_size();
  for (const TokenBias& bias : request.sampling.logit_bias) {
    if (bias.token < 0 || bias.token >= vocabulary) {
      return absl::InvalidArgumentError(StrCat("'logit_bias' names token ", bias.token,
                                               ", but this model's "
                                               "vocabulary has tokens 0 to ",
                                               vocabulary - 1));
    }
  }
  const int64_t cap = options_.max_output_tokens();
  if (request.max_tokens > cap) {
    return WithErrorField(absl::InvalidArgumentError(StrCat("max_tokens ", request.max_tokens,
                                                            " exceeds this model's limit of ", cap,
                                                            " (parameters.max_tokens)")),
                          "max_tokens");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RequestPreparer::ApplyChatTemplate(
    const std::vector<ChatMessage>& messages) const {
  if (template_ == nullptr) return template_status_;
  absl::StatusOr<std::string> prompt = template_->Render(messages, /*add_generation_prompt=*/true);
  if (!prompt.ok()) return prompt.status();
  // As llama.cpp's server does: the tokenizer adds BOS itself, so a template that writes it
  // too would give two.
  const std::string& bos = template_->bos_token();
  if (llama_vocab_get_add_bos(tokenizer_.vocab()) && !bos.empty() && prompt->starts_with(bos)) {
    prompt->erase(0, bos.size());
  }
  return prompt;
}

absl::StatusOr<std::string> RequestPreparer::RenderChatPrompt(
    const GenerateRequest& request) const {
  if (request.tools == nullptr || tool_format_ == nullptr) {
    return ApplyChatTemplate(request.messages);
  }
  ASSIGN_OR_RETURN(ChatToolPrompt prompt, ApplyToolFormat(request));
  return std::move(prompt.prompt);
}

absl::StatusOr<ChatToolPrompt> RequestPreparer::ApplyToolFormat(
    const GenerateRequest& request) const {
  const GenerationTools& tools = *request.tools;
  std::vector<ChatTurn> turns;
  turns.reserve(tools.messages.size());
  for (const ToolTurn& message : tools.messages) {
    ChatTurn& turn = turns.emplace_back(message.role, message.content);
    turn.tool_call_id = message.tool_call_id;
    turn.tool_name = message.tool_name;
    for (const GeneratedToolCall& call : message.tool_calls) {
      turn.tool_calls.push_back(ChatToolCall{call.id, call.name, call.arguments});
    }
  }
  ChatToolRequest offered;
  for (const ToolDefinition& function : tools.functions) {
    offered.tools.push_back(ChatTool{function.name, function.description, function.parameters});
  }
  switch (tools.choice) {
    case GenerationTools::Choice::kAuto:
      offered.choice = ChatToolChoice::kAuto;
      break;
    case GenerationTools::Choice::kRequired:
      offered.choice = ChatToolChoice::kRequired;
      break;
    case GenerationTools::Choice::kNamed:
      offered.choice = ChatToolChoice::kNamed;
      break;
  }
  offered.named = tools.named;
  offered.parallel = tools.parallel;
  ASSIGN_OR_RETURN(ChatToolPrompt prompt, tool_format_->Apply(turns, offered));
  // As ApplyChatTemplate: the tokenizer adds BOS itself.
  const std::string& bos = template_->bos_token();
  if (llama_vocab_get_add_bos(tokenizer_.vocab()) && !bos.empty() &&
      prompt.prompt.starts_with(bos)) {
    prompt.prompt.erase(0, bos.size());
  }
  return prompt;
}

absl::StatusOr<std::vector<int32_t>> RequestPreparer::TokenizeChecked(
    const std::string& rendered, const std::vector<std::string>& contents) const {
  if (!options_.special_tokens_in_messages) {
    for (size_t i = 0; i < contents.size(); ++i) {
      for (int32_t token : tokenizer_.Tokenize(contents[i], false, true)) {
        if (llama_vocab_get_attr(tokenizer_.vocab(), token) &
            (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED)) {
          return absl::InvalidArgumentError(
              StrCat("messages[", i, "].content holds the text of the special token '",
                     tokenizer_.Piece(token, true),
                     "', which this model's chat template does not let inferd keep as plain "
                     "text; remove it (or the operator may set "
                     "parameters.special_tokens_in_messages)"));
        }
      }
    }
  }
  return tokenizer_.Tokenize(rendered);
}

absl::StatusOr<std::vector<int32_t>> RequestPreparer::TokenizeChat(
    const std::vector<ChatMessage>& messages) const {
  ASSIGN_OR_RETURN(std::string rendered, ApplyChatTemplate(messages));
  if (options_.special_tokens_in_messages) return tokenizer_.Tokenize(rendered);
  // The contents as plain text (prompt_segments.h): the template rendered a second time with
  // markers for the contents says where they stand.
  absl::StatusOr<std::string> marked = ApplyChatTemplate(MarkedMessages(messages));
  std::optional<std::vector<PromptSegment>> segments;
  if (marked.ok()) segments = SplitRenderedPrompt(rendered, *marked, messages);
  if (!segments) {
    // The template looks at the contents, so they cannot be told apart from its text: a
    // content that holds special-token text is refused rather than tokenised as control.
    std::vector<std::string> contents;
    for (const ChatMessage& message : messages) contents.push_back(message.content);
    return TokenizeChecked(rendered, contents);
  }
  std::vector<int32_t> tokens;
  bool first = true;
  for (const PromptSegment& segment : *segments) {
    // BOS (when the vocabulary wants it) once, before the first segment.
    std::vector<int32_t> part = tokenizer_.Tokenize(segment.text, first, !segment.content);
    first = false;
    tokens.insert(tokens.end(), part.begin(), part.end());
  }
  if (first) tokens = tokenizer_.Tokenize("");
  return tokens;
}

absl::StatusOr<PreparedRequest> RequestPreparer::Prepare(const GenerateRequest& request) const {
  std::vector<int32_t> tokens;
  std::shared_ptr<const ChatToolPrompt> tool_prompt;
  if (request.chat && request.tools != nullptr && tool_format_ != nullptr) {
    // The template's own tool format, in place of the generic one the frontend also wrote
    // (its messages and its output schema are left unused).
    ASSIGN_OR_RETURN(ChatToolPrompt applied, ApplyToolFormat(request));
    std::vector<std::string> contents;
    for (const ToolTurn& message : request.tools->messages) contents.push_back(message.content);
    ASSIGN_OR_RETURN(tokens, TokenizeChecked(applied.prompt, contents));
    tool_prompt = std::make_shared<const ChatToolPrompt>(std::move(applied));
  } else if (request.chat) {
    ASSIGN_OR_RETURN(tokens, TokenizeChat(request.messages));
  } else {
    // A raw prompt is the client's whole prompt, special tokens and all (as llama.cpp's
    // server takes it).
    tokens = tokenizer_.Tokenize(request.prompt);
  }
  if (tokens.empty()) return absl::InvalidArgumentError("the prompt is empty (it has no tokens)");
  const int64_t n_prompt = static_cast<int64_t>(tokens.size());
  if (n_prompt >= options_.context_length) {
    return PromptTooLong(
        request, absl::InvalidArgumentError(
                     StrCat("the prompt has ", n_prompt,
                            " tokens, but a sequence of this model holds ", options_.context_length,
                            " tokens, prompt and output together (parameters.context_length)")));
  }
  PreparedRequest prepared;
  prepared.prompt = std::make_shared<const std::vector<int32_t>>(std::move(tokens));
  prepared.max_tokens = request.max_tokens > 0 ? request.max_tokens : options_.max_output_tokens();
  // Free text, the common case, costs nothing here.
  const OutputFormat& format = request.output_format;
  if (tool_prompt != nullptr) {
    // The generic format's schema is not used, but its checks (keywords the converter would
    // not enforce, depth, patterns) refuse the same tools in both formats.
    if (format.kind != OutputFormat::Kind::kText) RETURN_IF_ERROR(OutputGrammar(format).status());
    ASSIGN_OR_RETURN(prepared.grammar,
                     CompileToolGrammar(tokenizer_.vocab(), *tool_prompt, "tools"));
    prepared.tool_prompt = std::move(tool_prompt);
  } else if (format.kind != OutputFormat::Kind::kText) {
    ASSIGN_OR_RETURN(const std::string gbnf, OutputGrammar(format));
    ASSIGN_OR_RETURN(prepared.grammar,
                     CompileGrammar(tokenizer_.vocab(), gbnf, OutputFormatField(format)));
  }
  return prepared;
}

}  // namespace inferd
