// The JSON writing the generation replies share (generation_reply.cc, generation_stream.cc):
// the heads, usage, logprobs and tool calls of OpenAI's and KServe's shapes. Internal to
// the generation codec (generation_codec.h is its interface).
#ifndef INFERD_FRONTENDS_HTTP_CODECS_GENERATION_JSON_H_
#define INFERD_FRONTENDS_HTTP_CODECS_GENERATION_JSON_H_

#include <span>
#include <string>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/backend/generation.h"
#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/generation_codec_tools.h"

namespace inferd::generation_json {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view text);
std::string Body(const rapidjson::StringBuffer& buffer);
std::string_view FinishReasonName(FinishReason reason);
void WriteUsage(Writer& w, const GenerationUsage& usage);
// The fields every OpenAI reply and chunk starts with.
void WriteOpenAiHead(Writer& w, const GenerationCall& call, bool chunk);
void WriteKServeHead(Writer& w, const GenerationCall& call);
// "logprobs": null, or the tokens' logprobs in the API's shape (chat's or completions');
// `offset`: the bytes of the choice's text before these tokens.
void WriteLogprobs(Writer& w, const GenerationCall& call, std::span<const TokenLogprob> logprobs,
                   size_t offset);
// A chat message's content, or its tool_calls (content null), in OpenAI's shape.
void WriteToolReply(Writer& w, const ToolReply& reply);

}  // namespace inferd::generation_json

#endif  // INFERD_FRONTENDS_HTTP_CODECS_GENERATION_JSON_H_
