#include "frontends/http/codecs/generation_json.h"

#include <algorithm>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace inferd::generation_json {
namespace {

void TokenBytes(Writer& w, std::string_view token) {
  w.StartArray();
  for (unsigned char byte : token) w.Uint(byte);
  w.EndArray();
}

// Chat's logprobs object: {"content": [{"token", "logprob", "bytes", "top_logprobs"}]}. A
// token's text may end inside a UTF-8 character: "token" then holds the valid prefix with
// U+FFFD (the JSON writer's replacement) and "bytes" the exact bytes, as OpenAI's do.
void WriteChatLogprobs(Writer& w, std::span<const TokenLogprob> logprobs) {
  w.StartObject();
  w.Key("content");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) {
    w.StartObject();
    w.Key("token");
    String(w, entry.token);
    w.Key("logprob");
    w.Double(entry.logprob);
    w.Key("bytes");
    TokenBytes(w, entry.token);
    w.Key("top_logprobs");
    w.StartArray();
    for (const auto& [token, logprob] : entry.top) {
      w.StartObject();
      w.Key("token");
      String(w, token);
      w.Key("logprob");
      w.Double(logprob);
      w.Key("bytes");
      TokenBytes(w, token);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("refusal");
  w.Null();
  w.EndObject();
}

// The completions API's logprobs: parallel lists of tokens, their logprobs, a {token: logprob}
// map of alternatives per token, and each token's byte offset in the choice's text
// (`text_offset`, counted from `offset`).
void WriteCompletionLogprobs(Writer& w, std::span<const TokenLogprob> logprobs, size_t offset) {
  w.StartObject();
  w.Key("tokens");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) String(w, entry.token);
  w.EndArray();
  w.Key("token_logprobs");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) w.Double(entry.logprob);
  w.EndArray();
  w.Key("top_logprobs");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) {
    w.StartObject();
    std::vector<std::string_view> seen;
    for (const auto& [token, logprob] : entry.top) {
      // Two token ids can share a text; a JSON object keeps the likelier (first) one.
      if (std::find(seen.begin(), seen.end(), token) != seen.end()) continue;
      seen.push_back(token);
      w.Key(token.data(), static_cast<rapidjson::SizeType>(token.size()));
      w.Double(logprob);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("text_offset");
  w.StartArray();
  for (const TokenLogprob& entry : logprobs) {
    w.Uint64(offset);
    offset += entry.token.size();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

void String(Writer& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

std::string Body(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kNone:
      break;
  }
  return "stop";
}

void WriteUsage(Writer& w, const GenerationUsage& usage) {
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(usage.prompt_tokens);
  w.Key("completion_tokens");
  w.Int64(usage.completion_tokens);
  w.Key("total_tokens");
  w.Int64(usage.prompt_tokens + usage.completion_tokens);
  w.Key("prompt_tokens_details");
  w.StartObject();
  w.Key("cached_tokens");
  w.Int64(usage.cached_prompt_tokens);
  w.EndObject();
  w.EndObject();
}

void WriteOpenAiHead(Writer& w, const GenerationCall& call, bool chunk) {
  w.Key("id");
  String(w, call.id);
  w.Key("object");
  if (call.api == GenerationApi::kChat) {
    String(w, chunk ? "chat.completion.chunk" : "chat.completion");
  } else {
    String(w, "text_completion");
  }
  w.Key("created");
  w.Int64(call.created);
  w.Key("model");
  String(w, call.model);
}

void WriteKServeHead(Writer& w, const GenerationCall& call) {
  w.Key("model_name");
  String(w, call.model);
  w.Key("model_version");
  String(w, call.model_version);
  if (!call.id.empty()) {
    w.Key("id");
    String(w, call.id);
  }
}

void WriteLogprobs(Writer& w, const GenerationCall& call, std::span<const TokenLogprob> logprobs,
                   size_t offset) {
  w.Key("logprobs");
  if (!call.logprobs) {
    w.Null();
  } else if (call.api == GenerationApi::kChat) {
    WriteChatLogprobs(w, logprobs);
  } else {
    WriteCompletionLogprobs(w, logprobs, offset);
  }
}

void WriteToolReply(Writer& w, const ToolReply& reply) {
  w.Key("content");
  if (reply.calls.empty()) return String(w, reply.content);
  w.Null();
  w.Key("tool_calls");
  w.StartArray();
  for (const ToolCall& call : reply.calls) {
    w.StartObject();
    w.Key("id");
    String(w, call.id);
    w.Key("type");
    String(w, "function");
    w.Key("function");
    w.StartObject();
    w.Key("name");
    String(w, call.name);
    w.Key("arguments");
    String(w, call.arguments);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace inferd::generation_json
