#include "frontends/http/handlers/lifecycle_stats.h"

#include <string>

namespace inferd {
namespace {}  // namespace

void WriteLifecycleReport(const LifecycleReport& report, JsonWriter& writer) {
  writer.StartObject();
  writer.Key("resident_bytes");
  writer.Uint64(report.resident_bytes);
  writer.Key("counters");
  writer.StartObject();
  const LifecycleCounters& c = report.counters;
  writer.Key("loads");
  writer.Uint64(c.loads);
  writer.Key("load_failures");
  writer.Uint64(c.load_failures);
  writer.Key("evictions");
  writer.Uint64(c.evictions);
  writer.Key("reloads");
  writer.Uint64(c.reloads);
  writer.Key("idle_unloads");
  writer.Uint64(c.idle_unloads);
  writer.Key("unloads");
  writer.Uint64(c.unloads);
  writer.EndObject();
  writer.Key("devices");
  writer.StartArray();
  for (const DeviceMemory& device : report.devices) {
    writer.StartObject();
    writer.Key("device");
    WriteString(writer, device.device);
    writer.Key("budget_bytes");
    writer.Uint64(device.budget_bytes);
    writer.Key("used_bytes");
    writer.Uint64(device.used_bytes);
    writer.EndObject();
  }
  writer.EndArray();
  writer.Key("versions");
  writer.StartArray();
  for (const VersionMemory& v : report.versions) {
    writer.StartObject();
    writer.Key("name");
    WriteString(writer, v.name);
    writer.Key("version");
    WriteString(writer, std::to_string(v.version));
    writer.Key("state");
    WriteString(writer, ModelStateName(v.state));
    writer.Key("device");
    WriteString(writer, v.device);
    writer.Key("memory_bytes");
    writer.Uint64(v.memory_bytes);
    writer.Key("rss_growth_bytes");
    writer.Uint64(v.rss_growth_bytes);
    writer.Key("shared_weights");
    writer.Bool(v.shared_weights);
    writer.Key("pinned");
    writer.Bool(v.pinned);
    writer.Key("last_load_ms");
    writer.Double(v.last_load_ms);
    writer.Key("loads");
    writer.Uint64(v.loads);
    writer.Key("reloads");
    writer.Uint64(v.reloads);
    writer.Key("evictions");
    writer.Uint64(v.evictions);
    writer.Key("requests");
    writer.Uint64(v.requests);
    writer.Key("idle_ms");
    writer.Int64(v.idle_ms);
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
}

void WriteMemoryUsage(const LifecycleReport& report, std::string_view name, int64_t version,
                      JsonWriter& writer) {
  writer.Key("memory_usage");
  writer.StartArray();
  for (const VersionMemory& v : report.versions) {
    if (v.name != name || v.version != version || v.state != ModelState::kReady) continue;
    writer.StartObject();
    writer.Key("type");
    writer.String(v.device == "cpu" ? "CPU" : "GPU");
    writer.Key("id");
    writer.Int64(0);
    writer.Key("byte_size");
    writer.Uint64(v.memory_bytes);
    writer.EndObject();
  }
  writer.EndArray();
  writer.Key("requests");
  for (const VersionMemory& v : report.versions) {
    if (v.name == name && v.version == version) {
      writer.Uint64(v.requests);
      return;
    }
  }
  writer.Uint64(0);
}

}  // namespace inferd
