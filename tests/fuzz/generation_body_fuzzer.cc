// The generation bodies a client sends: OpenAI chat completions and completions, and KServe
// generate (POST /v1/chat/completions, /v1/completions, /v2/models/M/generate[_stream]), and
// OpenAI embeddings (POST /v1/embeddings),
// through ParseJsonBody and the generation codec's parsers; what they accept is encoded
// back as a reply and as a stream, as the handlers do. The engine is not involved: the
// codec is where every client size and count is bounded. Input: one byte choosing the API
// (0: chat, 1: completion, 2: KServe generate, 3: KServe generate_stream, 4: embeddings),
// then the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/json_body.h"
#include "frontends/http/embedding_codec.h"
#include "frontends/http/generation_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const uint8_t api = data[0] % 5;
  std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
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
  absl::StatusOr<inferd::ParsedGeneration> parsed =
      api == 0   ? inferd::ParseOpenAiRequest(json->root(), inferd::GenerationApi::kChat)
      : api == 1 ? inferd::ParseOpenAiRequest(json->root(), inferd::GenerationApi::kCompletion)
                 : inferd::ParseKServeGenerate(json->root(), api == 3);
  if (!parsed.ok()) {
    (void)inferd::GenerationErrorReply(
        api < 2 ? inferd::GenerationApi::kChat : inferd::GenerationApi::kKServe, parsed.status());
    return 0;
  }
  const inferd::GenerationCall& call = parsed->call;
  (void)inferd::EncodeStreamStart(call);
  (void)inferd::EncodeStreamText(call, "text \"quoted\" \xe2\x82\xac");
  (void)inferd::EncodeStreamError(call, absl::InvalidArgumentError("fuzz"));
  return 0;
}
