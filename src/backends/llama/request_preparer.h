// Turns a generation request into what the decode loop runs: checks it, renders its chat
// messages with the model's template and tokenises the prompt.
//
// The cheap checks (Check) run on the caller's thread before the request is queued; the
// rendering and tokenising (Prepare) on the engine's preparation thread, because their cost
// grows with the client's prompt (llama_engine.h).
//
// Thread-safety: const after construction; every method may run on several threads at once.
// Ownership: borrows the tokenizer, which must outlive this.
#ifndef INFERD_BACKENDS_LLAMA_REQUEST_PREPARER_H_
#define INFERD_BACKENDS_LLAMA_REQUEST_PREPARER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/llama/chat_template.h"
#include "backends/llama/chat_tool_format.h"
#include "backends/llama/llama_options.h"
#include "backends/llama/tokenizer.h"
#include "core/backend/generation.h"

struct llama_model;
struct llama_sampler;

namespace inferd {

// A request ready to queue: its prompt (shared by its n choices), its output limit and the
// grammar its output must follow (null: free text).
struct PreparedRequest {
  std::shared_ptr<const std::vector<int32_t>> prompt;
  int64_t max_tokens = 0;
  std::shared_ptr<const llama_sampler> grammar;
  // With tools, when the model's template knows its own tool format: how the reply ends and
  // is read back (null: free text, or the frontend's generic tool format).
  std::shared_ptr<const ChatToolPrompt> tool_prompt;
};

class RequestPreparer {
 public:
  // Reads the chat template from `model` (a file without one, or with one llama.cpp's Jinja
  // engine cannot parse, serves prompts only).
  RequestPreparer(const llama_model* model, const Tokenizer& tokenizer,
                  const LlamaOptions& options);
  ~RequestPreparer();

  // InvalidArgument when the request cannot be served whatever its prompt's tokens turn out
  // to be: n, a prompt too long in bytes for the context, a logit bias outside the
  // vocabulary, max_tokens over the model's limit. Costs nothing in proportion to the prompt.
  absl::Status Check(const GenerateRequest& request) const;
  // The request's prompt tokens, output limit and compiled output grammar; InvalidArgument
  // when its messages do not render, its prompt does not fit the context, or its schema or
  // grammar cannot be enforced.
  absl::StatusOr<PreparedRequest> Prepare(const GenerateRequest& request) const;
  // The prompt text for `messages` (the assistant's turn opened).
  absl::StatusOr<std::string> ApplyChatTemplate(const std::vector<ChatMessage>& messages) const;
  // The prompt of a chat request: with tools in the template's own format when it knows one.
  absl::StatusOr<std::string> RenderChatPrompt(const GenerateRequest& request) const;

 private:
  // The prompt of a chat request: the template's text with special tokens, the contents
  // without (unless parameters.special_tokens_in_messages).
  absl::StatusOr<std::vector<int32_t>> TokenizeChat(const std::vector<ChatMessage>& messages) const;

  const Tokenizer& tokenizer_;
  const LlamaOptions options_;
  // The request's tools and history in the template's own format (request.tools set and
  // tool_format_ present), its prompt not yet tokenised.
  absl::StatusOr<ChatToolPrompt> ApplyToolFormat(const GenerateRequest& request) const;
  // A prompt tokenised with special tokens parsed, after refusing a content that holds the
  // text of a control token (which it would otherwise become).
  absl::StatusOr<std::vector<int32_t>> TokenizeChecked(
      const std::string& rendered, const std::vector<std::string>& contents) const;

  std::unique_ptr<ChatTemplate> template_;  // null: the file has none
  // The template's own tool format; null when it knows none (or the file has no template).
  std::unique_ptr<ChatToolFormat> tool_format_;
  absl::Status template_status_;  // why there is none
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_REQUEST_PREPARER_H_
