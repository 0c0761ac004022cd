// The reply of a whole (non-streamed) generation, and the generation APIs' errors.
#include <algorithm>
#include <span>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/codecs/generation_json.h"
#include "frontends/http/codecs/openai_error.h"

namespace inferd {

using generation_json::Body;
using generation_json::FinishReasonName;
using generation_json::String;
using generation_json::WriteKServeHead;
using generation_json::WriteLogprobs;
using generation_json::WriteOpenAiHead;
using generation_json::Writer;
using generation_json::WriteToolReply;
using generation_json::WriteUsage;

GenerationUsage TotalUsage(std::span<const GenerationChoice> choices) {
  GenerationUsage total;
  for (const GenerationChoice& choice : choices) {
    total.prompt_tokens = std::max(total.prompt_tokens, choice.done.usage.prompt_tokens);
    total.cached_prompt_tokens =
        std::max(total.cached_prompt_tokens, choice.done.usage.cached_prompt_tokens);
    total.completion_tokens += choice.done.usage.completion_tokens;
  }
  return total;
}

HttpReply EncodeGenerationReply(const GenerationCall& call,
                                std::span<const GenerationChoice> choices) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (call.api == GenerationApi::kKServe) {
    const GenerationChoice& only = choices.front();
    WriteKServeHead(w, call);
    w.Key("text_output");
    String(w, only.text);
    w.Key("finish_reason");
    String(w, FinishReasonName(only.done.finish_reason));
    WriteUsage(w, only.done.usage);
  } else {
    WriteOpenAiHead(w, call, false);
    w.Key("choices");
    w.StartArray();
    int index = 0;
    for (const GenerationChoice& choice : choices) {
      w.StartObject();
      w.Key("index");
      w.Int(index++);
      std::string_view finish = FinishReasonName(choice.done.finish_reason);
      if (call.api == GenerationApi::kChat) {
        w.Key("message");
        w.StartObject();
        w.Key("role");
        String(w, "assistant");
        if (call.tools != nullptr) {
          const ToolReply reply = ReadToolReply(choice.text, choice.done, "call_");
          WriteToolReply(w, reply);
          if (!reply.calls.empty()) finish = "tool_calls";
        } else {
          w.Key("content");
          String(w, choice.text);
        }
        w.EndObject();
      } else {
        w.Key("text");
        String(w, choice.text);
      }
      WriteLogprobs(w, call, choice.logprobs, 0);
      w.Key("finish_reason");
      String(w, finish);
      w.EndObject();
    }
    w.EndArray();
    WriteUsage(w, TotalUsage(choices));
  }
  w.EndObject();
  HttpReply reply;
  reply.body = Body(buffer);
  return reply;
}

HttpReply GenerationErrorReply(GenerationApi api, const absl::Status& status) {
  return api == GenerationApi::kKServe ? ErrorReply(status) : OpenAiErrorReply(status);
}

}  // namespace inferd
