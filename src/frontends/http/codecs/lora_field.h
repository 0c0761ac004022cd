// llama.cpp's server's per-request `lora` field: [{"id": N | "name": "adapter", "scale": S}],
// the adapters (config.yaml `adapters:`) a completion decodes with. Read and bounded here;
// the inference path resolves ids and names against the model's config.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_LORA_FIELD_H_
#define INFERD_FRONTENDS_HTTP_CODECS_LORA_FIELD_H_

#include <vector>

#include <simdjson.h>

#include "absl/status/status.h"
#include "core/backend/generation.h"

namespace inferd {

// At most kMaxAdapters entries, each an object with exactly one of `id` (0..kMaxAdapters-1)
// or `name` (at most kMaxModelNameBytes), and `scale` (required: llama.cpp's server reads a
// missing one as 0, which would silently turn the adapter off; finite, |scale| <=
// kMaxAdapterScale). An absent or null field leaves `out` alone; errors name `lora`.
absl::Status ReadLoraField(simdjson::dom::object o, std::vector<AdapterUse>* out);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_LORA_FIELD_H_
