// Prometheus series of the language models that are loaded (backend llama), written at
// scrape time from each model's GenerationStats, so the decode loop pays nothing for them:
//   inferd_llm_requests_total, inferd_llm_requests_failed_total
//   inferd_llm_prompt_tokens_total, inferd_llm_cached_prompt_tokens_total,
//   inferd_llm_completion_tokens_total           (rate() of these: tokens/s in and out)
//   inferd_llm_time_to_first_token_seconds       (summary: _sum and _count)
//   inferd_llm_time_per_output_token_seconds     (summary: _sum and _count)
//   inferd_llm_decode_seconds_total, inferd_llm_decode_steps_total
//   inferd_llm_active_sequences, inferd_llm_queued_requests,
//   inferd_llm_kv_cache_used_tokens, inferd_llm_kv_cache_tokens  (gauges)
// all labelled {model, version}.
#ifndef INFERD_OBSERVABILITY_GENERATION_METRICS_H_
#define INFERD_OBSERVABILITY_GENERATION_METRICS_H_

#include <string>

#include "core/repository/model_manager.h"

namespace inferd {

// The text exposition of the series above (empty when no language model is loaded).
std::string GenerationMetricsText(const ModelManager& models);

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_GENERATION_METRICS_H_
