// A GpuReader over NVIDIA's management library (NVML), loaded with dlopen() when inferd
// starts: the binary has no link-time dependency on the driver, so the same build runs on
// machines without one (Open then fails and the server exports no GPU series).
//
// Thread-safety: Read() may be called from several threads (NVML itself is thread-safe).
// Ownership: the reader keeps the library loaded and NVML initialised for its life.
#ifndef INFERD_OBSERVABILITY_NVML_READER_H_
#define INFERD_OBSERVABILITY_NVML_READER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "observability/gpu_metrics.h"

namespace inferd {

// The library the NVIDIA driver installs.
inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

class NvmlReader : public GpuReader {
 public:
  // Loads `library` (a name the dynamic loader resolves, or a path), initialises NVML and
  // counts the GPUs. Unavailable when the library is absent or lacks a function inferd
  // calls; NotFound when NVML starts but sees no GPU; FailedPrecondition when it fails to
  // start (a driver that is not loaded, a library older than the driver).
  static absl::StatusOr<std::unique_ptr<NvmlReader>> Open(const std::string& library);

  ~NvmlReader() override;
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;

  int device_count() const { return device_count_; }

  // Every GPU's current values; a value one device does not report is left unset.
  absl::StatusOr<std::vector<GpuSample>> Read() override;

 private:
  struct Functions;
  NvmlReader(void* handle, std::unique_ptr<Functions> functions, int device_count);

  void* handle_;
  std::unique_ptr<Functions> fn_;
  int device_count_;
};

// Opens kNvmlLibrary and installs it as the process's GPU reader; where it cannot (no
// driver, no GPU), logs one info line saying why and installs none. Never fails.
void InstallNvmlGpuMetrics();

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_NVML_READER_H_
