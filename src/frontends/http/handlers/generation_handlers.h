// The generation endpoints: OpenAI-compatible POST /v1/chat/completions and /v1/completions,
// POST /v1/embeddings, GET /v1/models[/M], and the KServe generate extension POST
// /v2/models/M/generate and generate_stream. None blocks the I/O thread on a model: the model is
// acquired (and loaded when lazy or evicted) on the manager's threads, tokens arrive on the model's
// decode thread, and replies and stream events are written by the connection's I/O thread.
// Encoding: a whole reply on the I/O thread (Responder::Defer); a streamed event's chunk (a few
// hundred bytes) on the decode thread, which posts it to the connection's strand. Moving that to
// the strand too is not done (docs/inference-path.md, "Which thread does what").
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_GENERATION_HANDLERS_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_GENERATION_HANDLERS_H_

#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/handler_context.h"
#include "frontends/http/handlers/kserve_handlers.h"
#include "frontends/http/http_types.h"

namespace inferd {

// api: kChat or kCompletion.
void HandleOpenAiGeneration(const HandlerContext& ctx, GenerationApi api,
                            const HttpRequestView& request, ResponderPtr responder);
void HandleKServeGenerate(const HandlerContext& ctx, const ModelRef& ref, bool stream,
                          const HttpRequestView& request, ResponderPtr responder);
// POST /v1/embeddings: OpenAI's embeddings, for a llama model with parameters.embeddings.
void HandleOpenAiEmbeddings(const HandlerContext& ctx, const HttpRequestView& request,
                            ResponderPtr responder);
// POST /v2/models/M/chat_template {"messages": [...]}: the prompt the model's chat template
// makes of them, {"model_name", "prompt"} (what the model would be given).
void HandleChatTemplate(const HandlerContext& ctx, const ModelRef& ref,
                        const HttpRequestView& request, ResponderPtr responder);
// GET /v1/models: every model of the repository that generates text, loaded or not.
HttpReply HandleOpenAiModels(const HandlerContext& ctx);
// GET /v1/models/M
HttpReply HandleOpenAiModel(const HandlerContext& ctx, std::string_view name);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_GENERATION_HANDLERS_H_
