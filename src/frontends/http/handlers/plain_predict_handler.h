// The seed's `POST /predict`: {"input": <nested list>} -> {"output": <nested list>}, the API
// of the quick Flask server users would otherwise write, so they can switch without changing
// their clients.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_PLAIN_PREDICT_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_PLAIN_PREDICT_HANDLER_H_

#include "frontends/http/handler_context.h"
#include "frontends/http/http_types.h"

namespace inferd {

// The model is ?model=NAME, else the context's default model, else the only ready model.
void HandlePlainPredict(const HandlerContext& ctx, const HttpRequestView& request,
                        ResponderPtr responder);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_PLAIN_PREDICT_HANDLER_H_
