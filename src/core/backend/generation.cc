#include "core/backend/generation.h"

#include "common/error_detail.h"
#include "common/strings.h"
#include "core/backend/infer_request.h"

namespace inferd {

size_t PromptBytes(const GenerateRequest& request) {
  if (!request.chat) return request.prompt.size();
  size_t bytes = 0;
  for (const ChatMessage& message : request.messages) {
    bytes += message.role.size() + message.content.size();
  }
  return bytes;
}

std::string_view OutputFormatField(const OutputFormat& format) {
  if (!format.field.empty()) return format.field;
  return format.kind == OutputFormat::Kind::kGrammar ? "grammar" : "response_format";
}

absl::Status CheckGenerateRequest(const GenerateRequest& request) {
  if (request.output_format.text.size() > kMaxOutputFormatBytes) {
    return absl::InvalidArgumentError(StrCat("'", OutputFormatField(request.output_format), "' is ",
                                             request.output_format.text.size(), " bytes; at most ",
                                             kMaxOutputFormatBytes, " are allowed"));
  }
  if (request.id.size() > kMaxClientIdBytes) {
    return absl::InvalidArgumentError(StrCat("the request id is ", request.id.size(),
                                             " bytes; at most ", kMaxClientIdBytes,
                                             " are allowed"));
  }
  if (const size_t bytes = PromptBytes(request); bytes > kMaxPromptBytes) {
    return WithErrorReason(
        WithErrorField(absl::InvalidArgumentError(
                           StrCat("the prompt is ", bytes, " bytes; at most ", kMaxPromptBytes,
                                  " are allowed (more than any context holds)")),
                       request.chat ? "messages" : "prompt"),
        ErrorReason::kContextLengthExceeded);
  }
  if (request.chat && request.messages.empty()) {
    return absl::InvalidArgumentError("'messages' must hold at least one message");
  }
  // A role is template text (most templates write it verbatim after a control token), so any
  // other string could carry control tokens of its own and forge a turn.
  for (size_t i = 0; i < request.messages.size(); ++i) {
    const std::string& role = request.messages[i].role;
    if (role != "system" && role != "developer" && role != "user" && role != "assistant") {
      return absl::InvalidArgumentError(
          StrCat("messages[", i, "].role must be system, developer, user or assistant, got '",
                 role.substr(0, 64), "'"));
    }
  }
  if (request.n < 1 || request.n > kMaxChoices) {
    return absl::InvalidArgumentError(
        StrCat("'n' is ", request.n, "; it must be between 1 and ", kMaxChoices));
  }
  if (request.stop.size() > kMaxStopStrings) {
    return absl::InvalidArgumentError(
        StrCat("'stop' holds ", request.stop.size(), " strings; at most ", kMaxStopStrings));
  }
  for (const std::string& stop : request.stop) {
    if (stop.empty() || stop.size() > kMaxStopBytes) {
      return absl::InvalidArgumentError(
          StrCat("a stop string must have 1 to ", kMaxStopBytes, " bytes, got ", stop.size()));
    }
  }
  if (request.max_tokens < 0) {
    return absl::InvalidArgumentError(
        StrCat("'max_tokens' is ", request.max_tokens, "; it must be at least 1"));
  }
  if (request.logprobs < -1 || request.logprobs > kMaxTopLogprobs) {
    return absl::InvalidArgumentError(StrCat("'top_logprobs' is ", request.logprobs,
                                             "; it must be between 0 and ", kMaxTopLogprobs));
  }
  return absl::OkStatus();
}

}  // namespace inferd
