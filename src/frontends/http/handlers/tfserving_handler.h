// TF-Serving's REST predict, `POST /v1/models/M[/versions/V]:predict`, so TF-Serving clients
// can switch servers without changes. Row format ("instances" -> "predictions") and columnar
// format ("inputs" -> "outputs").
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_TFSERVING_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_TFSERVING_HANDLER_H_

#include "frontends/http/handler_context.h"
#include "frontends/http/handlers/kserve_handlers.h"
#include "frontends/http/http_types.h"

namespace inferd {

void HandleTfServingPredict(const HandlerContext& ctx, const ModelRef& ref,
                            const HttpRequestView& request, ResponderPtr responder);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_TFSERVING_HANDLER_H_
