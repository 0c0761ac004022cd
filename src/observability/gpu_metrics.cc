#include "observability/gpu_metrics.h"

#include <charconv>
#include <functional>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/mutex.h"
#include "common/strings.h"

namespace inferd {
namespace {

// Label values come from the driver (board names, UUIDs): escaped as the format requires.
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

// Whole numbers (bytes, degrees) in all their digits, others in the shortest form that reads
// back exactly: a person reading a scrape sees 48000000000, not 4.8e+10.
std::string Number(double value) {
  char text[32];
  constexpr double kExactInteger = 9007199254740992.0;  // 2^53
  // Range first: casting NaN or a huge value to an integer is undefined.
  const bool whole = value < kExactInteger && value > -kExactInteger &&
                     value == static_cast<double>(static_cast<int64_t>(value));
  auto [end, ec] = whole ? std::to_chars(text, text + sizeof(text), static_cast<int64_t>(value))
                         : std::to_chars(text, text + sizeof(text), value);
  return ec == std::errc() ? std::string(text, end) : "NaN";
}

void Gauge(std::string& out, std::string_view name, std::string_view help,
           const std::vector<GpuSample>& samples,
           const std::function<std::optional<double>(const GpuSample&)>& value) {
  std::string lines;
  for (const GpuSample& s : samples) {
    const std::optional<double> v = value(s);
    if (!v) continue;
    lines += StrCat(name, "{gpu=\"", s.index, "\",uuid=\"", Escape(s.uuid), "\",name=\"",
                    Escape(s.name), "\"} ", Number(*v), "\n");
  }
  if (lines.empty()) return;
  out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n", lines);
}

std::optional<double> AsDouble(const std::optional<int64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

Mutex reader_mu;
// Shared so that a scrape in flight keeps the reader it started with alive.
std::shared_ptr<GpuReader>& ProcessReader() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reader_mu) {
  static auto* reader = new std::shared_ptr<GpuReader>();
  return *reader;
}
// The last read error logged: a GPU that stops answering is logged once, not every scrape.
std::string& LastError() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reader_mu) {
  static auto* error = new std::string();
  return *error;
}

}  // namespace

std::string GpuMetricsText(const std::vector<GpuSample>& samples) {
  std::string out;
  Gauge(out, "inferd_gpu_utilization_ratio",
        "Fraction of the last sample period in which a kernel ran on the GPU (NVML).", samples,
        [](const GpuSample& s) { return s.utilization_ratio; });
  Gauge(out, "inferd_gpu_memory_used_bytes", "GPU memory in use, by every process (NVML).", samples,
        [](const GpuSample& s) { return AsDouble(s.memory_used_bytes); });
  Gauge(out, "inferd_gpu_memory_total_bytes", "GPU memory installed (NVML).", samples,
        [](const GpuSample& s) { return AsDouble(s.memory_total_bytes); });
  Gauge(out, "inferd_gpu_power_watts", "GPU board power draw (NVML).", samples,
        [](const GpuSample& s) { return s.power_watts; });
  Gauge(out, "inferd_gpu_temperature_celsius", "GPU core temperature (NVML).", samples,
        [](const GpuSample& s) { return s.temperature_celsius; });
  return out;
}

void SetProcessGpuReader(std::unique_ptr<GpuReader> reader) {
  MutexLock lock(&reader_mu);
  ProcessReader() = std::move(reader);
  LastError().clear();
}

std::string ProcessGpuMetricsText() {
  std::shared_ptr<GpuReader> reader;
  {
    MutexLock lock(&reader_mu);
    reader = ProcessReader();
  }
  if (reader == nullptr) return {};
  absl::StatusOr<std::vector<GpuSample>> samples = reader->Read();
  MutexLock lock(&reader_mu);
  if (!samples.ok()) {
    const std::string error(samples.status().message());
    if (error != LastError()) spdlog::warn("GPU metrics: {}", error);
    LastError() = error;
    return {};
  }
  LastError().clear();
  return GpuMetricsText(*samples);
}

}  // namespace inferd
