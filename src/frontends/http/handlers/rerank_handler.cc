#include "frontends/http/handlers/rerank_handler.h"

#include <optional>
#include <utility>

#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/codecs/rerank_codec.h"
#include "frontends/http/handlers/openai_request_prologue.h"

namespace inferd {

void HandleRerank(const HandlerContext& ctx, const HttpRequestView& request,
                  ResponderPtr responder) {
  constexpr GenerationApi api = GenerationApi::kCompletion;  // OpenAI's error shape
  std::optional<PreparedOpenAiRequest<ParsedRerank>> prepared =
      PrepareOpenAiRequest<ParsedRerank>(request, *responder, ParseRerankRequest);
  if (!prepared) return;
  ParsedRerank* parsed = &prepared->parsed;
  RerankRequest& rerank = *parsed->request;
  // The documents travel to the reply only when asked for.
  std::vector<std::string> documents;
  if (parsed->return_documents) documents = rerank.documents;
  // As for embeddings: the callback holds no model handle (the decode thread must not release
  // the last one).
  rerank.on_done = [responder, name = parsed->model, top_n = parsed->top_n,
                    documents = std::move(documents)](absl::StatusOr<RerankResult> result) mutable {
    if (!result.ok()) return responder->Send(GenerationErrorReply(api, result.status()));
    // Encoded on the I/O thread, not the decode loop's.
    responder->Defer([name, top_n, documents = std::move(documents), result = *std::move(result)] {
      return EncodeRerankReply(name, top_n, documents, result);
    });
  };
  ctx.inference->Rerank(parsed->model, prepared->timeout_us, std::move(parsed->request),
                        [responder](const ModelHandle& model) { responder->NoteModel(model); });
}

}  // namespace inferd
