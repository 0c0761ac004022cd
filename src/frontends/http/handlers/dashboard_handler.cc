#include "frontends/http/handlers/dashboard_handler.h"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/client_paths.h"
#include "common/clock.h"
#include "common/strings.h"
#include "frontends/http/handlers/generation_stats.h"
#include "frontends/http/handlers/index_row.h"
#include "frontends/http/handlers/static_files.h"

namespace inferd {
namespace {

// The statistics writers (WriteGenerationStats) take this one.
using Writer = JsonWriter;

// JSON has no infinity: the +Inf bucket's bound is written as null.
void WriteNumber(Writer& writer, double value) {
  if (std::isfinite(value)) {
    writer.Double(value);
  } else {
    writer.Null();
  }
}

void WriteMetricFamily(const prometheus::MetricFamily& family, Writer& writer) {
  writer.StartObject();
  writer.Key("name");
  WriteString(writer, family.name);
  writer.Key("series");
  writer.StartArray();
  for (const prometheus::ClientMetric& metric : family.metric) {
    writer.StartObject();
    writer.Key("labels");
    writer.StartObject();
    for (const auto& label : metric.label) {
      writer.Key(label.name.c_str());
      WriteString(writer, label.value);
    }
    writer.EndObject();
    switch (family.type) {
      case prometheus::MetricType::Counter:
        writer.Key("value");
        WriteNumber(writer, metric.counter.value);
        break;
      case prometheus::MetricType::Gauge:
        writer.Key("value");
        WriteNumber(writer, metric.gauge.value);
        break;
      case prometheus::MetricType::Histogram:
        writer.Key("count");
        writer.Uint64(metric.histogram.sample_count);
        writer.Key("sum");
        WriteNumber(writer, metric.histogram.sample_sum);
        writer.Key("buckets");  // [[upper bound, cumulative count], ...]
        writer.StartArray();
        for (const auto& bucket : metric.histogram.bucket) {
          writer.StartArray();
          WriteNumber(writer, bucket.upper_bound);
          writer.Uint64(bucket.cumulative_count);
          writer.EndArray();
        }
        writer.EndArray();
        break;
      default:
        break;
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
}

}  // namespace

HttpReply HandleDashboardFile(const HandlerContext& ctx, std::string_view file) {
  if (ctx.dashboard == nullptr) {
    return ErrorReply(404,
                      "the dashboard is not built: scripts/setup builds it into build/dashboard "
                      "(npm), or point --dashboard-dir at a built copy");
  }
  const StaticFile* found = ctx.dashboard->Find(file.empty() ? "index.html" : file);
  if (found == nullptr) {
    return ErrorReply(404, StrCat("no file '", file, "' in the dashboard"));
  }
  HttpReply reply{200, found->content, found->content_type, {}};
  reply.headers.emplace_back("Cache-Control", "no-cache");
  return reply;
}

HttpReply HandleDashboardData(const HandlerContext& ctx) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  writer.Key("time_ms");
  writer.Int64(WallClockMs());
  writer.Key("server_version");
  WriteString(writer, ctx.server_version);

  writer.Key("models");
  writer.StartArray();
  const std::vector<ModelHandle> ready = ctx.models->ReadyModels();
  for (const ModelStatus& status : ctx.models->Index()) {
    writer.StartObject();
    WriteIndexRowFields(status, writer);
    for (const ModelHandle& model : ready) {
      if (model->name() == status.name && status.version && model->version() == *status.version) {
        writer.Key("queue_depth");
        writer.Uint64(model->queue_depth());
        writer.Key("max_batch_size");
        writer.Int64(model->config().max_batch_size);
        // A language model: tokens in and out, time to first token, sequences, KV cache.
        if (const GenerativeModel* generator = model->generative(); generator != nullptr) {
          WriteGenerationStats(generator->Stats(), writer);
        }
      }
    }
    writer.EndObject();
  }
  writer.EndArray();

  writer.Key("metrics");
  writer.StartArray();
  if (ctx.metrics != nullptr) {
    for (const prometheus::MetricFamily& family : ctx.metrics->Collect(ctx.models)) {
      WriteMetricFamily(family, writer);
    }
  }
  writer.EndArray();

  writer.Key("recent_errors");
  writer.StartArray();
  if (ctx.recent_errors != nullptr) {
    for (const RecentError& error : ctx.recent_errors->Snapshot()) {
      writer.StartObject();
      writer.Key("time_ms");
      writer.Int64(error.time_ms);
      writer.Key("request_id");
      WriteString(writer, error.request_id);
      writer.Key("request");
      WriteString(writer, error.request);
      writer.Key("model");
      WriteString(writer, error.model);
      writer.Key("version");
      WriteString(writer, error.version);
      writer.Key("status");
      writer.Uint(error.status);
      // The recorder keeps the raw message (the server's log wants the full paths); this
      // answer goes to a browser, so it names no server folder (common/client_paths.h).
      writer.Key("message");
      WriteString(writer, WithoutServerPaths(error.message));
      writer.EndObject();
    }
  }
  writer.EndArray();
  writer.EndObject();
  return HttpReply{200,
                   std::string(buffer.GetString(), buffer.GetSize()),
                   "application/json",
                   {{"Cache-Control", "no-store"}}};
}

}  // namespace inferd
