// The "generation" section of a language model's statistics (GET /v2/models/M/stats): time
// to first token, time per output token, tokens in and out, tokens per second of decoding,
// KV cache use, running sequences and queue length.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_GENERATION_STATS_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_GENERATION_STATS_H_

#include "core/backend/generation.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {

void WriteGenerationStats(const GenerationStats& stats, JsonWriter& writer);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_GENERATION_STATS_H_
