// GPU series in /metrics: utilisation, memory, power and temperature of every GPU the
// process can see, read at scrape time through a GpuReader (NvmlReader in production, a fake
// device table in tests) and written in the Prometheus text format:
//   inferd_gpu_utilization_ratio        busy fraction of the last sample period (0..1)
//   inferd_gpu_memory_used_bytes, inferd_gpu_memory_total_bytes
//   inferd_gpu_power_watts, inferd_gpu_temperature_celsius
// each labelled {gpu="<index>",uuid="GPU-…",name="NVIDIA H200"}. A value the device does not
// report (power on some boards, anything on a MIG slice) is left out, not written as 0.
//
// The reader is installed once for the process (SetProcessGpuReader, from main), so neither
// the metrics registry nor the HTTP handler context carries it.
#ifndef INFERD_OBSERVABILITY_GPU_METRICS_H_
#define INFERD_OBSERVABILITY_GPU_METRICS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace inferd {

// One GPU's reading. Unset fields are values the device did not report.
struct GpuSample {
  int index = 0;
  std::string uuid;
  std::string name;
  std::optional<double> utilization_ratio;  // 0..1
  std::optional<int64_t> memory_used_bytes;
  std::optional<int64_t> memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> temperature_celsius;
};

// Reads every visible GPU. Implementations must be thread-safe (scrapes may overlap).
class GpuReader {
 public:
  virtual ~GpuReader() = default;
  virtual absl::StatusOr<std::vector<GpuSample>> Read() = 0;
};

// The text exposition of `samples` (empty for no GPU).
std::string GpuMetricsText(const std::vector<GpuSample>& samples);

// Installs the process's reader (null: none); the previous one is destroyed.
void SetProcessGpuReader(std::unique_ptr<GpuReader> reader);

// The installed reader's series now; empty when none is installed or the read fails.
std::string ProcessGpuMetricsText();

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_GPU_METRICS_H_
