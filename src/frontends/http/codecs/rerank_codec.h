// Request parsing and reply encoding for POST /v1/rerank (also /rerank and /v2/rerank), in
// the Jina/Cohere shape llama.cpp's server serves. Plain functions over JSON text,
// unit-tested without a server.
//
// Request: {"model", "query": str, "documents": [str, ...], "top_n"?: int >= 1,
// "return_documents"?: bool}. Bounds: 1..kMaxRerankDocuments non-empty documents, a non-empty
// query, 1 MiB of text in all; any other field is refused naming it. The model checks each
// pair's tokens against what it scores at once.
// Reply: {"model", "object": "list", "usage": {"prompt_tokens", "total_tokens"},
// "results": [{"index", "relevance_score", "document"?: {"text"}}]}, sorted by score (highest
// first; equal scores keep the documents' order), the first top_n of them.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_RERANK_CODEC_H_
#define INFERD_FRONTENDS_HTTP_CODECS_RERANK_CODEC_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "frontends/http/http_types.h"

namespace inferd {

struct ParsedRerank {
  std::string model;
  size_t top_n = 0;  // 0: every document
  bool return_documents = false;
  std::unique_ptr<RerankRequest> request;
};

absl::StatusOr<ParsedRerank> ParseRerankRequest(simdjson::dom::element body);

// `documents`: the request's, for return_documents (empty otherwise).
HttpReply EncodeRerankReply(std::string_view model, size_t top_n,
                            const std::vector<std::string>& documents, const RerankResult& result);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_RERANK_CODEC_H_
