// GET /v2/models/M[/versions/V]/config: the model's configuration in the JSON form of
// Triton's ModelConfig (model_config.proto field names, TYPE_* datatypes, dims without the
// batch dimension), the fields Triton's clients read: perf_analyzer asks for it before it
// sends anything, and tritonclient's get_model_config returns it. The same facts as the gRPC
// ModelConfig call (frontends/grpc/grpc_model_info.cc).
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_MODEL_CONFIG_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_MODEL_CONFIG_HANDLER_H_

#include "frontends/http/handler_context.h"
#include "frontends/http/handlers/kserve_handlers.h"
#include "frontends/http/http_types.h"

namespace inferd {

// Answers without loading the model: a lazy or evicted model has a config too. The batching
// shown is the one in force when a version is loaded (auto-tuning may have chosen sizes),
// else what config.yaml asks for.
HttpReply HandleModelConfig(const HandlerContext& ctx, const ModelRef& ref);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_MODEL_CONFIG_HANDLER_H_
