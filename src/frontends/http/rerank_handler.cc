#include "frontends/http/rerank_handler.h"

#include <utility>

#include "auth/access_policy.h"
#include "common/json_body.h"
#include "frontends/http/generation_codec.h"
#include "frontends/http/rerank_codec.h"
#include "frontends/http/session_request.h"

namespace inferd {

void HandleRerank(const HandlerContext& ctx, const HttpRequestView& request,
                  ResponderPtr responder) {
  constexpr GenerationApi api = GenerationApi::kCompletion;  // OpenAI's error shape
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(GenerationErrorReply(api, body.status()));
  absl::StatusOr<ParsedRerank> parsed = ParseRerankRequest(body->root());
  if (!parsed.ok()) return responder->Send(GenerationErrorReply(api, parsed.status()));
  if (request.tenant != nullptr) {
    if (absl::Status allowed = CheckTenantModel(*request.tenant, parsed->model); !allowed.ok()) {
      return responder->Send(GenerationErrorReply(api, allowed));
    }
  }
  absl::StatusOr<int64_t> timeout_us = HeaderTimeoutUs(request);
  if (!timeout_us.ok()) return responder->Send(GenerationErrorReply(api, timeout_us.status()));
  RerankRequest& rerank = *parsed->request;
  responder->WatchDisconnect(
      [cancelled = rerank.cancelled] { cancelled->store(true, std::memory_order_release); });
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
  ctx.inference->Rerank(parsed->model, *timeout_us, std::move(parsed->request),
                        [responder](const ModelHandle& model) { NoteModel(*responder, model); });
}

}  // namespace inferd
