// The generation bodies a client sends: OpenAI chat completions and completions, and KServe
// generate (POST /v1/chat/completions, /v1/completions, /v2/models/M/generate[_stream]),
// OpenAI embeddings (POST /v1/embeddings), rerank (POST /v1/rerank) and Anthropic messages
// (POST /v1/messages), through ParseJsonBody and the generation codec's parsers; what they accept
// is encoded back as a reply and as a stream, as the handlers do. The engine is not involved: the
// codec is where every client size and count is bounded; what passes the codec also goes
// through the limits every entry point applies (CheckGenerateRequest). Replies carry logprobs
// when the request asked, with a token that ends inside a UTF-8 character. Input: one byte
// choosing the API (0: chat, 1: completion, 2: KServe generate, 3: KServe generate_stream,
// 4: embeddings, 5: Anthropic messages, 6: rerank), then the body. With tools, a tool call's JSON
// is encoded as calls; the body itself is parsed as a model's tool reply too.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/json_body.h"
#include "frontends/http/codecs/anthropic_codec.h"
#include "frontends/http/codecs/embedding_codec.h"
#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/generation_codec_tools.h"
#include "frontends/http/codecs/rerank_codec.h"

namespace {
constexpr char kToolReply[] =
    R"({"tool_calls":[{"name":"f","arguments":{"a":"\u00e9"}},{"name":"g","arguments":{}}]})";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const uint8_t api = data[0] % 7;
  std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)inferd::ParseToolReply(body, "call_");
  absl::StatusOr<inferd::ParsedJson> json = inferd::ParseJsonBody(body);
  if (!json.ok()) return 0;
  if (api == 4) {
    absl::StatusOr<inferd::ParsedEmbeddings> embeddings =
        inferd::ParseEmbeddingsRequest(json->root());
    if (!embeddings.ok()) return 0;
    // A reply with one small vector per input, as the handler encodes one.
    inferd::EmbedResult result;
    result.embeddings.assign(embeddings->request->inputs.size(), {0.5f, -1e-8f});
    (void)inferd::EncodeEmbeddingsReply(embeddings->model, embeddings->base64, result);
    return 0;
  }
  if (api == 6) {
    absl::StatusOr<inferd::ParsedRerank> rerank = inferd::ParseRerankRequest(json->root());
    if (!rerank.ok()) return 0;
    // A reply scoring every document, returned when asked for, cut to top_n.
    inferd::RerankResult result;
    result.scores.assign(rerank->request->documents.size(), -1.5f);
    const std::vector<std::string> none;
    (void)inferd::EncodeRerankReply(rerank->model, rerank->top_n,
                                    rerank->return_documents ? rerank->request->documents : none,
                                    result);
    return 0;
  }
  if (api == 5) {
    absl::StatusOr<inferd::ParsedAnthropicMessages> messages =
        inferd::ParseAnthropicMessages(json->root());
    if (!messages.ok()) {
      (void)inferd::AnthropicErrorBody(400, messages.status());
      return 0;
    }
    (void)inferd::CheckGenerateRequest(*messages->request);
    inferd::GenerationEvent done;
    done.done = true;
    done.finish_reason = inferd::FinishReason::kStop;
    (void)inferd::EncodeAnthropicMessage(messages->call, "text \xe2\x82", done);
    (void)inferd::EncodeAnthropicStreamStart(messages->call);
    (void)inferd::EncodeAnthropicStreamEnd(done);
    if (messages->call.tools != nullptr) {
      (void)inferd::EncodeAnthropicMessage(messages->call, kToolReply, done);
      (void)inferd::EncodeAnthropicStreamToolEnd(kToolReply, done);
    }
    return 0;
  }
  absl::StatusOr<inferd::ParsedGeneration> parsed =
      api == 0   ? inferd::ParseOpenAiRequest(json->root(), inferd::GenerationApi::kChat)
      : api == 1 ? inferd::ParseOpenAiRequest(json->root(), inferd::GenerationApi::kCompletion)
                 : inferd::ParseKServeGenerate(json->root(), api == 3);
  if (!parsed.ok()) {
    (void)inferd::GenerationErrorReply(
        api < 2 ? inferd::GenerationApi::kChat : inferd::GenerationApi::kKServe, parsed.status());
    return 0;
  }
  (void)inferd::CheckGenerateRequest(*parsed->request);
  const inferd::GenerationCall& call = parsed->call;
  std::vector<inferd::TokenLogprob> logprobs;
  if (call.logprobs) {
    inferd::TokenLogprob token{"\xe2\x82", -0.5f, {}};
    for (int i = 0; i < parsed->request->logprobs; ++i) token.top.push_back({"\"k\"", -1.0f});
    logprobs.push_back(token);
  }
  (void)inferd::EncodeStreamStart(call);
  (void)inferd::EncodeStreamText(call, "text \"quoted\" \xe2\x82\xac", 0, logprobs, 3);
  inferd::GenerationChoice choice;
  choice.text = "\xe2\x82";
  choice.done.done = true;
  choice.logprobs = logprobs;
  (void)inferd::EncodeGenerationReply(call, std::span(&choice, 1));
  if (call.tools != nullptr) {
    choice.text = kToolReply;
    (void)inferd::EncodeGenerationReply(call, std::span(&choice, 1));
    (void)inferd::EncodeStreamToolChoiceEnd(call, kToolReply, choice.done);
  }
  (void)inferd::EncodeStreamError(call, absl::InvalidArgumentError("fuzz"));
  return 0;
}
