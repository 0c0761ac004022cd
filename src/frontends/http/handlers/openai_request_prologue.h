// What an OpenAI-shaped request for a model named in its body does before it reaches the
// inference path (embeddings, rerank): the body parsed by the endpoint's codec, the caller's
// tenant allowed that model, the Inference-Timeout-Us header read, and a client disconnect
// set to cancel the request. Each refusal is sent in OpenAI's error shape, once. (The router
// checked the key's role and the tenant's limits; the model is known only once the body is
// parsed, so its tenant rule is checked here.)
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_OPENAI_REQUEST_PROLOGUE_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_OPENAI_REQUEST_PROLOGUE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "auth/access_policy.h"
#include "common/json_body.h"
#include "frontends/http/codecs/generation_codec.h"
#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

template <typename Parsed>
struct PreparedOpenAiRequest {
  Parsed parsed;
  int64_t timeout_us = 0;  // the Inference-Timeout-Us header's; 0: none
};

// `parse` is the codec's parser: simdjson::dom::element -> absl::StatusOr<Parsed>, where
// Parsed has the body's `model` and a `request` whose `cancelled` flag a disconnect sets.
// nullopt: the request was refused and the refusal sent.
template <typename Parsed, typename Parse>
std::optional<PreparedOpenAiRequest<Parsed>> PrepareOpenAiRequest(const HttpRequestView& request,
                                                                  Responder& responder,
                                                                  Parse parse) {
  constexpr GenerationApi api = GenerationApi::kCompletion;  // OpenAI's error shape
  auto refuse = [&](const absl::Status& status) {
    responder.Send(GenerationErrorReply(api, status));
    return std::nullopt;
  };
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return refuse(body.status());
  absl::StatusOr<Parsed> parsed = parse(body->root());
  if (!parsed.ok()) return refuse(parsed.status());
  if (request.tenant != nullptr) {
    if (absl::Status allowed = CheckTenantModel(*request.tenant, parsed->model); !allowed.ok()) {
      return refuse(allowed);
    }
  }
  absl::StatusOr<int64_t> timeout_us = HeaderTimeoutUs(request);
  if (!timeout_us.ok()) return refuse(timeout_us.status());
  responder.WatchDisconnect([cancelled = parsed->request->cancelled] {
    cancelled->store(true, std::memory_order_release);
  });
  return PreparedOpenAiRequest<Parsed>{*std::move(parsed), *timeout_us};
}

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_OPENAI_REQUEST_PROLOGUE_H_
