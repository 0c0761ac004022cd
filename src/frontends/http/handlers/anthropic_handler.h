// POST /v1/messages: Anthropic's Messages API (anthropic_codec.h) on inferd's
// chat models, through the same inference service as the OpenAI endpoints
// (limits, deadline, tenant, cancellation, lazy loads). Never blocks the I/O
// thread: tokens arrive on the model's decode thread, and the reply or the
// stream's events are written by the connection's.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_ANTHROPIC_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_ANTHROPIC_HANDLER_H_

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

void HandleAnthropicMessages(const HandlerContext& ctx, const HttpRequestView& request,
                             ResponderPtr responder);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_ANTHROPIC_HANDLER_H_
