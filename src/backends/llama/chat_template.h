// A GGUF file's own chat template (its tokenizer.chat_template metadata, Jinja), rendered
// with llama.cpp's Jinja engine (common/jinja, compiled from the same llama.cpp source as
// the engine), so the prompt is the one llama.cpp's server would build for the same
// messages.
//
// Thread-safety: Render is const and may run on several threads at once (the parsed
// program is shared read-only, each call has its own context).
#ifndef INFERD_BACKENDS_LLAMA_CHAT_TEMPLATE_H_
#define INFERD_BACKENDS_LLAMA_CHAT_TEMPLATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"

namespace inferd {

class ChatTemplate {
 public:
  // Parses `source`; InvalidArgument with the engine's message when it is not valid Jinja.
  // `bos_token` and `eos_token` are the texts of the vocabulary's special tokens, which
  // templates may use.
  static absl::StatusOr<std::unique_ptr<ChatTemplate>> Create(const std::string& source,
                                                              std::string bos_token,
                                                              std::string eos_token);
  ~ChatTemplate();

  // The prompt for `messages`, with the assistant's turn opened when
  // `add_generation_prompt`. InvalidArgument when the template rejects the messages (its
  // raise_exception, a missing field).
  absl::StatusOr<std::string> Render(const std::vector<ChatMessage>& messages,
                                     bool add_generation_prompt) const;

  const std::string& bos_token() const { return bos_token_; }

 private:
  struct Program;
  ChatTemplate(std::unique_ptr<Program> program, std::string bos, std::string eos);

  std::unique_ptr<Program> program_;
  std::string bos_token_;
  std::string eos_token_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_CHAT_TEMPLATE_H_
