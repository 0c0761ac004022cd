#include "observability/generation_metrics.h"

#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace inferd {
namespace {

struct Series {
  std::string labels;  // {model="m",version="1"}
  GenerationStats stats;
};

// Label values are model names (folder names) and version numbers, but escape anyway.
std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Number(double value) {
  std::string out;
  strings_internal::Append(out, value);
  return out;
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            const std::vector<Series>& series,
            const std::function<double(const GenerationStats&)>& value) {
  out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
  for (const Series& s : series) out += StrCat(name, s.labels, " ", Number(value(s.stats)), "\n");
}

void Summary(std::string& out, std::string_view name, std::string_view help,
             const std::vector<Series>& series,
             const std::function<const DurationStat&(const GenerationStats&)>& stat) {
  out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " summary\n");
  for (const Series& s : series) {
    const DurationStat& d = stat(s.stats);
    out += StrCat(name, "_sum", s.labels, " ", Number(Seconds(d.ns)), "\n");
    out += StrCat(name, "_count", s.labels, " ", d.count, "\n");
  }
}

}  // namespace

std::string GenerationMetricsText(const ModelManager& models) {
  std::vector<Series> series;
  for (const ModelHandle& model : models.ReadyModels()) {
    const GenerativeModel* generator = model->generative();
    if (generator == nullptr) continue;
    series.push_back(
        {StrCat("{model=\"", Escape(model->name()), "\",version=\"", model->version(), "\"}"),
         generator->Stats()});
  }
  if (series.empty()) return {};
  std::string out;
  using S = GenerationStats;
  Family(out, "inferd_llm_requests_total", "counter", "Generation requests answered.", series,
         [](const S& s) { return static_cast<double>(s.requests); });
  Family(out, "inferd_llm_requests_failed_total", "counter",
         "Generation requests that ended with an error (cancelled, expired, refused).", series,
         [](const S& s) { return static_cast<double>(s.requests_failed); });
  Family(out, "inferd_llm_prompt_tokens_total", "counter", "Prompt tokens processed.", series,
         [](const S& s) { return static_cast<double>(s.prompt_tokens); });
  Family(out, "inferd_llm_cached_prompt_tokens_total", "counter",
         "Prompt tokens reused from the KV cache instead of processed.", series,
         [](const S& s) { return static_cast<double>(s.cached_prompt_tokens); });
  Family(out, "inferd_llm_completion_tokens_total", "counter", "Tokens generated.", series,
         [](const S& s) { return static_cast<double>(s.completion_tokens); });
  Family(out, "inferd_llm_decode_seconds_total", "counter",
         "Time spent in the engine's decode calls.", series,
         [](const S& s) { return std::chrono::duration<double>(s.decode_time).count(); });
  Family(out, "inferd_llm_decode_steps_total", "counter", "Engine decode calls (batched steps).",
         series, [](const S& s) { return static_cast<double>(s.decode_steps); });
  Summary(out, "inferd_llm_time_to_first_token_seconds",
          "From a request's arrival to its first generated token.", series,
          [](const S& s) -> const DurationStat& { return s.ttft; });
  Summary(out, "inferd_llm_time_per_output_token_seconds",
          "Mean time between a request's generated tokens after the first.", series,
          [](const S& s) -> const DurationStat& { return s.tpot; });
  Family(out, "inferd_llm_active_sequences", "gauge", "Sequences being decoded now.", series,
         [](const S& s) { return static_cast<double>(s.active_sequences); });
  Family(out, "inferd_llm_queued_requests", "gauge", "Requests waiting for a free sequence.",
         series, [](const S& s) { return static_cast<double>(s.queued); });
  Family(out, "inferd_llm_kv_cache_used_tokens", "gauge", "Tokens held in the KV cache.", series,
         [](const S& s) { return static_cast<double>(s.kv_cells_used); });
  Family(out, "inferd_llm_kv_cache_tokens", "gauge", "Tokens the KV cache can hold.", series,
         [](const S& s) { return static_cast<double>(s.kv_cells_total); });
  return out;
}

}  // namespace inferd
