// POST /v1/rerank (also /rerank and /v2/rerank, as llama.cpp's server serves them): relevance
// scores of documents for a query from a llama cross-encoder reranker (parameters.pooling:
// rank), in the Jina/Cohere shape (rerank_codec.h). Like embeddings, it never blocks the I/O
// thread: the decode loop scores one pair between two decode steps.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_RERANK_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_RERANK_HANDLER_H_

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

void HandleRerank(const HandlerContext& ctx, const HttpRequestView& request,
                  ResponderPtr responder);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_RERANK_HANDLER_H_
