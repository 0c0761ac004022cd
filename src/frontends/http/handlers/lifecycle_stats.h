// The lifecycle part of the statistics replies: memory per device against its budget,
// load/eviction/reload counters, and per version its memory, loads and request count.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_LIFECYCLE_STATS_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_LIFECYCLE_STATS_H_

#include <cstdint>
#include <string_view>

#include "core/repository/lifecycle_report.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {

// {"resident_bytes", "counters": {...}, "devices": [...], "versions": [...]}
void WriteLifecycleReport(const LifecycleReport& report, JsonWriter& writer);

// Triton's per-model "memory_usage": [{"type": "CPU", "id": 0, "byte_size": N}].
void WriteMemoryUsage(const LifecycleReport& report, std::string_view name, int64_t version,
                      JsonWriter& writer);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_LIFECYCLE_STATS_H_
