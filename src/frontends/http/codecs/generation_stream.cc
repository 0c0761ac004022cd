// The server-sent events of a streamed generation: OpenAI's chunks (chat and completions,
// tool calls included) and KServe's generate_stream events.
#include <span>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/codecs/generation_json.h"

namespace inferd {
namespace {

using generation_json::FinishReasonName;
using generation_json::String;
using generation_json::WriteKServeHead;
using generation_json::WriteLogprobs;
using generation_json::WriteOpenAiHead;
using generation_json::Writer;
using generation_json::WriteUsage;

std::string Event(const rapidjson::StringBuffer& buffer) {
  std::string event = "data: ";
  event.append(buffer.GetString(), buffer.GetSize());
  event += "\n\n";
  return event;
}

// One OpenAI chunk with a single choice: `text` as the delta (or the role), and the finish
// reason when given.
std::string OpenAiChunk(const GenerationCall& call, int index, std::string_view text, bool role,
                        const FinishReason* finish, std::span<const TokenLogprob> logprobs = {},
                        size_t offset = 0) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteOpenAiHead(w, call, true);
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(index);
  if (call.api == GenerationApi::kChat) {
    w.Key("delta");
    w.StartObject();
    if (role) {
      w.Key("role");
      String(w, "assistant");
      w.Key("content");
      String(w, "");
    } else if (finish == nullptr) {
      w.Key("content");
      String(w, text);
    }
    w.EndObject();
  } else {
    w.Key("text");
    String(w, text);
  }
  if (role || finish != nullptr) {
    w.Key("logprobs");
    w.Null();
  } else {
    WriteLogprobs(w, call, logprobs, offset);
  }
  w.Key("finish_reason");
  if (finish != nullptr) {
    String(w, FinishReasonName(*finish));
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return Event(buffer);
}

// A chat chunk with one tool call of choice `index` (the call whole: its id, name and
// arguments in one delta), or, with `call` null, the choice's finish reason "tool_calls".
std::string ToolCallChunk(const GenerationCall& head, int index, const ToolCall* call,
                          int call_index) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteOpenAiHead(w, head, true);
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(index);
  w.Key("delta");
  w.StartObject();
  if (call != nullptr) {
    w.Key("tool_calls");
    w.StartArray();
    w.StartObject();
    w.Key("index");
    w.Int(call_index);
    w.Key("id");
    String(w, call->id);
    w.Key("type");
    String(w, "function");
    w.Key("function");
    w.StartObject();
    w.Key("name");
    String(w, call->name);
    w.Key("arguments");
    String(w, call->arguments);
    w.EndObject();
    w.EndObject();
    w.EndArray();
  }
  w.EndObject();
  w.Key("logprobs");
  w.Null();
  w.Key("finish_reason");
  if (call == nullptr) {
    String(w, "tool_calls");
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return Event(buffer);
}

}  // namespace

std::string EncodeStreamStart(const GenerationCall& call, int index) {
  if (call.api != GenerationApi::kChat) return {};
  return OpenAiChunk(call, index, {}, /*role=*/true, nullptr);
}

std::string EncodeStreamText(const GenerationCall& call, std::string_view text, int index,
                             std::span<const TokenLogprob> logprobs, size_t offset) {
  if (call.api != GenerationApi::kKServe) {
    return OpenAiChunk(call, index, text, false, nullptr, logprobs, offset);
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteKServeHead(w, call);
  w.Key("text_output");
  String(w, text);
  w.EndObject();
  return Event(buffer);
}

std::string EncodeStreamChoiceEnd(const GenerationCall& call, const GenerationEvent& done,
                                  int index, size_t offset) {
  if (call.api == GenerationApi::kKServe) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    WriteKServeHead(w, call);
    w.Key("text_output");
    String(w, done.text);
    w.Key("finish_reason");
    String(w, FinishReasonName(done.finish_reason));
    WriteUsage(w, done.usage);
    w.EndObject();
    return Event(buffer);
  }
  std::string events;
  if (!done.text.empty() || !done.logprobs.empty()) {
    events += OpenAiChunk(call, index, done.text, false, nullptr, done.logprobs, offset);
  }
  events += OpenAiChunk(call, index, {}, false, &done.finish_reason);
  return events;
}

std::string EncodeStreamToolChoiceEnd(const GenerationCall& call, std::string_view text,
                                      const GenerationEvent& done, int index) {
  const ToolReply reply = ReadToolReply(text, done, "call_");
  std::string events;
  if (reply.calls.empty()) {
    if (!reply.content.empty()) events += OpenAiChunk(call, index, reply.content, false, nullptr);
    return events + OpenAiChunk(call, index, {}, false, &done.finish_reason);
  }
  int call_index = 0;
  for (const ToolCall& tool_call : reply.calls) {
    events += ToolCallChunk(call, index, &tool_call, call_index++);
  }
  return events + ToolCallChunk(call, index, nullptr, 0);
}

std::string EncodeStreamFinish(const GenerationCall& call, const GenerationUsage& usage) {
  if (call.api == GenerationApi::kKServe) return {};
  std::string events;
  if (call.include_usage) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    WriteOpenAiHead(w, call, true);
    w.Key("choices");
    w.StartArray();
    w.EndArray();
    WriteUsage(w, usage);
    w.EndObject();
    events += Event(buffer);
  }
  events += "data: [DONE]\n\n";
  return events;
}

std::string EncodeStreamEnd(const GenerationCall& call, const GenerationEvent& done) {
  return EncodeStreamChoiceEnd(call, done, 0) + EncodeStreamFinish(call, done.usage);
}

std::string EncodeStreamError(const GenerationCall& call, const absl::Status& status) {
  HttpReply reply = GenerationErrorReply(call.api, status);
  std::string event = "data: " + reply.body + "\n\n";
  if (call.api != GenerationApi::kKServe) event += "data: [DONE]\n\n";
  return event;
}

}  // namespace inferd
