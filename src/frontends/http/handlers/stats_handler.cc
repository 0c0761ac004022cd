#include "frontends/http/handlers/stats_handler.h"

#include <string>
#include <vector>

#include "frontends/http/codecs/json_tensor_codec.h"
#include "frontends/http/handlers/generation_stats.h"
#include "frontends/http/handlers/lifecycle_stats.h"

namespace inferd {
namespace {

void WriteDuration(const char* key, const DurationStat& stat, JsonWriter& writer) {
  writer.Key(key);
  writer.StartObject();
  writer.Key("count");
  writer.Uint64(stat.count);
  writer.Key("ns");
  writer.Uint64(stat.ns);
  writer.EndObject();
}

void WriteBatching(const ServedModel& model, JsonWriter& writer) {
  const BatchPolicy& policy = model.batch_policy();
  writer.Key("batching");
  writer.StartObject();
  writer.Key("dynamic");
  writer.Bool(policy.dynamic);
  // "default": max_batch_size > 0 and no dynamic_batching section (model_config.h).
  writer.Key("source");
  writer.String(model.config().dynamic_batching.by_default ? "default" : "config");
  writer.Key("max_batch_size");
  writer.Int64(policy.max_rows);
  writer.Key("preferred_batch_sizes");
  writer.StartArray();
  for (int size : policy.preferred_batch_sizes) writer.Int(size);
  writer.EndArray();
  writer.Key("max_queue_delay_us");
  writer.Int64(
      std::chrono::duration_cast<std::chrono::microseconds>(policy.max_queue_delay).count());
  if (const std::optional<BatchTuning>& tuning = model.tuning()) {
    writer.Key("auto_tune");
    writer.StartObject();
    writer.Key("latency_slo_ms");
    writer.Double(tuning->latency_slo_ms);
    writer.Key("chosen_batch_size");
    writer.Int64(tuning->chosen);
    // Backlog mode (batch_planner.h): 0 rows when no larger size had more throughput.
    writer.Key("backlog_batch_size");
    writer.Int64(tuning->backlog_batch_size);
    writer.Key("backlog_rows");
    writer.Int64(tuning->backlog_batch_size > tuning->chosen ? tuning->backlog_rows : 0);
    auto write_measurement = [&writer](const BatchSizeMeasurement& m) {
      writer.Key("batch_size");
      writer.Int64(m.batch_size);
      writer.Key("latency_ms");
      writer.Double(m.latency_ms);
      writer.Key("items_per_s");
      writer.Double(m.items_per_s);
      writer.Key("within_slo");
      writer.Bool(m.within_slo);
    };
    writer.Key("table");
    writer.StartArray();
    for (const BatchSizeMeasurement& m : tuning->table) {
      writer.StartObject();
      write_measurement(m);
      writer.EndObject();
    }
    writer.EndArray();
    // The chosen size timed with other intra-op thread counts, and the count kept (0: the
    // backend offered no choice, or the model has a backlog size).
    writer.Key("intra_op_threads");
    writer.Int(tuning->intra_op_threads);
    writer.Key("thread_trials");
    writer.StartArray();
    for (const auto& [threads, m] : tuning->thread_trials) {
      writer.StartObject();
      writer.Key("intra_op_threads");
      writer.Int(threads);
      write_measurement(m);
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
  }
  writer.EndObject();
}

// The intra-op thread count chosen at load, why, and the runs timed for it
// (core/scheduling/intra_op_probe.h); `current`: the count the model's last run used (it
// moves when the model adapts it at run time: BackendModel::AdaptIntraOpThreads).
void WriteIntraOpThreads(const IntraOpChoice& choice, int current, JsonWriter& writer) {
  writer.Key("intra_op_threads");
  writer.StartObject();
  writer.Key("count");
  writer.Int(choice.threads);
  writer.Key("current");
  writer.Int(current);
  writer.Key("reason");
  writer.String(choice.reason.c_str());
  writer.Key("probe");
  writer.StartArray();
  for (const IntraOpRun& run : choice.probe) {
    writer.StartObject();
    writer.Key("intra_op_threads");
    writer.Int(run.threads);
    writer.Key("batch_size");
    writer.Int64(run.batch_size);
    writer.Key("fastest_ms");
    writer.Double(run.fastest_ms);
    writer.Key("runs");
    writer.Int(run.runs);
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
}

void WriteModelStats(const ServedModel& model, const LifecycleReport& lifecycle,
                     JsonWriter& writer) {
  const ModelStatsSnapshot stats = model.stats().Snapshot();
  writer.StartObject();
  writer.Key("name");
  writer.String(model.name().c_str());
  writer.Key("version");
  writer.String(std::to_string(model.version()).c_str());
  writer.Key("last_inference");
  writer.Int64(stats.last_inference_ms);
  writer.Key("inference_count");
  writer.Uint64(stats.inference_count);
  writer.Key("execution_count");
  writer.Uint64(stats.execution_count);
  writer.Key("queue_depth");
  writer.Uint64(model.queue_depth());
  writer.Key("inference_stats");
  writer.StartObject();
  WriteDuration("success", stats.success, writer);
  WriteDuration("fail", stats.fail, writer);
  WriteDuration("queue", stats.queue, writer);
  WriteDuration("compute_input", stats.compute_input, writer);
  WriteDuration("compute_infer", stats.compute_infer, writer);
  WriteDuration("compute_output", stats.compute_output, writer);
  WriteDuration("cache_hit", stats.cache_hit, writer);
  WriteDuration("cache_miss", stats.cache_miss, writer);
  writer.EndObject();
  if (const ResponseCache* cache = model.response_cache()) {
    // inferd's addition: what the cache holds now, against its bound.
    const ResponseCacheStats held = cache->Stats();
    writer.Key("response_cache");
    writer.StartObject();
    writer.Key("bytes");
    writer.Uint64(held.bytes);
    writer.Key("max_bytes");
    writer.Uint64(held.max_bytes);
    writer.Key("entries");
    writer.Uint64(held.entries);
    writer.Key("evictions");
    writer.Uint64(held.evictions);
    writer.EndObject();
  }
  writer.Key("batch_stats");
  writer.StartArray();
  for (const auto& [size, per_size] : stats.batch_stats) {
    writer.StartObject();
    writer.Key("batch_size");
    writer.Int64(size);
    WriteDuration("compute_input", per_size.compute_input, writer);
    WriteDuration("compute_infer", per_size.compute_infer, writer);
    WriteDuration("compute_output", per_size.compute_output, writer);
    writer.EndObject();
  }
  writer.EndArray();
  WriteBatching(model, writer);
  WriteIntraOpThreads(model.intra_op(), model.backend_model()->intra_op_threads(), writer);
  if (const GenerativeModel* generator = model.generative()) {
    WriteGenerationStats(generator->Stats(), writer);
  }
  WriteMemoryUsage(lifecycle, model.name(), model.version(), writer);
  writer.EndObject();
}

}  // namespace

HttpReply HandleModelStats(const HandlerContext& ctx, const std::optional<ModelRef>& ref) {
  std::vector<ModelHandle> models;
  if (ref) {
    absl::StatusOr<ModelHandle> model = ctx.models->Acquire(ref->name, ref->version);
    if (!model.ok()) return ErrorReply(model.status());
    models.push_back(*std::move(model));
  } else {
    models = ctx.models->ReadyModels();
  }
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("model_stats");
  writer.StartArray();
  const LifecycleReport lifecycle = ctx.models->Report();
  for (const ModelHandle& model : models) WriteModelStats(*model, lifecycle, writer);
  writer.EndArray();
  writer.EndObject();
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

HttpReply HandleRepositoryStats(const HandlerContext& ctx) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteLifecycleReport(ctx.models->Report(), writer);
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

}  // namespace inferd
