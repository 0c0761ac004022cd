#include "frontends/http/handlers/generation_stats.h"

#include <chrono>

namespace inferd {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

double MeanMs(const DurationStat& stat) {
  return stat.count == 0 ? 0 : static_cast<double>(stat.ns) / 1e6 / static_cast<double>(stat.count);
}

}  // namespace

void WriteGenerationStats(const GenerationStats& stats, JsonWriter& writer) {
  writer.Key("generation");
  writer.StartObject();
  writer.Key("context_length");
  writer.Int64(stats.context_length);
  writer.Key("parallel");
  writer.Int64(stats.parallel);
  writer.Key("active_sequences");
  writer.Int64(stats.active_sequences);
  writer.Key("queued");
  writer.Int64(stats.queued);
  writer.Key("kv_cache_used_tokens");
  writer.Int64(stats.kv_cells_used);
  writer.Key("kv_cache_tokens");
  writer.Int64(stats.kv_cells_total);
  writer.Key("requests");
  writer.Uint64(stats.requests);
  writer.Key("requests_failed");
  writer.Uint64(stats.requests_failed);
  writer.Key("prompt_tokens");
  writer.Uint64(stats.prompt_tokens);
  writer.Key("cached_prompt_tokens");
  writer.Uint64(stats.cached_prompt_tokens);
  writer.Key("completion_tokens");
  writer.Uint64(stats.completion_tokens);
  writer.Key("decode_steps");
  writer.Uint64(stats.decode_steps);
  writer.Key("decode_seconds");
  writer.Double(Seconds(stats.decode_time));
  // Output tokens per second of engine time: what the decode loop achieves while busy.
  writer.Key("completion_tokens_per_decode_second");
  const double busy = Seconds(stats.decode_time);
  writer.Double(busy > 0 ? static_cast<double>(stats.completion_tokens) / busy : 0);
  writer.Key("time_to_first_token_ms_mean");
  writer.Double(MeanMs(stats.ttft));
  writer.Key("time_per_output_token_ms_mean");
  writer.Double(MeanMs(stats.tpot));
  writer.Key("embedding_requests");
  writer.Uint64(stats.embedding_requests);
  writer.Key("embedding_tokens");
  writer.Uint64(stats.embedding_tokens);
  writer.Key("rerank_requests");
  writer.Uint64(stats.rerank_requests);
  writer.Key("rerank_tokens");
  writer.Uint64(stats.rerank_tokens);
  writer.EndObject();
}

}  // namespace inferd
