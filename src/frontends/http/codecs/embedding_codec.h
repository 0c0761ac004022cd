// Request parsing and reply encoding for OpenAI's POST /v1/embeddings. Plain functions over
// JSON text, unit-tested without a server.
//
// Bounds: `input` is a non-empty string or a list of 1..kMaxEmbeddingInputs non-empty
// strings, 1 MiB of text in all (CheckPromptBytes); the model checks each input's tokens
// against what it embeds at once. Token-id inputs are refused (their ids would be another
// tokenizer's).
#ifndef INFERD_FRONTENDS_HTTP_CODECS_EMBEDDING_CODEC_H_
#define INFERD_FRONTENDS_HTTP_CODECS_EMBEDDING_CODEC_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "frontends/http/http_types.h"

namespace inferd {

inline constexpr size_t kMaxEmbeddingInputs = 512;

struct ParsedEmbeddings {
  std::string model;
  bool base64 = false;  // encoding_format "base64": little-endian float32, base64
  std::unique_ptr<EmbedRequest> request;
};

absl::StatusOr<ParsedEmbeddings> ParseEmbeddingsRequest(simdjson::dom::element body);

// {"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
// "usage": {"prompt_tokens", "total_tokens"}}.
HttpReply EncodeEmbeddingsReply(std::string_view model, bool base64, const EmbedResult& result);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_EMBEDDING_CODEC_H_
