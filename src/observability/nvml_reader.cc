#include "observability/nvml_reader.h"

#include <dlfcn.h>

#include <utility>

#include <spdlog/spdlog.h>

#include "common/strings.h"

namespace inferd {
namespace {

// The few NVML declarations inferd uses, copied from nvml.h (its ABI is stable: the _v2
// entry points have kept their signatures since CUDA 5), so the build needs no NVML header.
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlDeviceSt;
using NvmlDevice = NvmlDeviceSt*;
struct NvmlUtilization {
  unsigned int gpu;     // percent of the sample period a kernel ran
  unsigned int memory;  // percent of it device memory was read or written
};
struct NvmlMemory {
  unsigned long long total;  // NOLINT(runtime/int): nvml.h's type
  unsigned long long free;   // NOLINT(runtime/int)
  unsigned long long used;   // NOLINT(runtime/int)
};
constexpr int kNvmlTemperatureGpu = 0;       // NVML_TEMPERATURE_GPU
constexpr unsigned int kNvmlTextBytes = 96;  // NVML_DEVICE_{UUID,NAME}_V2_BUFFER_SIZE

}  // namespace

struct NvmlReader::Functions {
  NvmlReturn (*init)();
  NvmlReturn (*shutdown)();
  const char* (*error_string)(NvmlReturn);
  NvmlReturn (*get_count)(unsigned int*);
  NvmlReturn (*get_handle)(unsigned int, NvmlDevice*);
  NvmlReturn (*get_uuid)(NvmlDevice, char*, unsigned int);
  NvmlReturn (*get_name)(NvmlDevice, char*, unsigned int);
  NvmlReturn (*get_utilization)(NvmlDevice, NvmlUtilization*);
  NvmlReturn (*get_memory)(NvmlDevice, NvmlMemory*);
  NvmlReturn (*get_power)(NvmlDevice, unsigned int*);  // milliwatts
  NvmlReturn (*get_temperature)(NvmlDevice, int, unsigned int*);

  std::string Error(NvmlReturn code) const {
    const char* text = error_string(code);
    return StrCat(text != nullptr ? text : "unknown error", " (NVML error ", code, ")");
  }
};

namespace {

template <typename F>
bool Resolve(void* handle, const char* symbol, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (*out == nullptr) *missing = symbol;
  return *out != nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NvmlReader>> NvmlReader::Open(const std::string& library) {
  // RTLD_LOCAL: NVML's symbols stay out of the process's global namespace.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(StrCat(library, " could not be loaded (",
                                         error != nullptr ? error : "unknown error",
                                         "): no NVIDIA driver here"));
  }
  auto fn = std::make_unique<Functions>();
  std::string missing;
  if (!Resolve(handle, "nvmlInit_v2", &fn->init, &missing) ||
      !Resolve(handle, "nvmlShutdown", &fn->shutdown, &missing) ||
      !Resolve(handle, "nvmlErrorString", &fn->error_string, &missing) ||
      !Resolve(handle, "nvmlDeviceGetCount_v2", &fn->get_count, &missing) ||
      !Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &fn->get_handle, &missing) ||
      !Resolve(handle, "nvmlDeviceGetUUID", &fn->get_uuid, &missing) ||
      !Resolve(handle, "nvmlDeviceGetName", &fn->get_name, &missing) ||
      !Resolve(handle, "nvmlDeviceGetUtilizationRates", &fn->get_utilization, &missing) ||
      !Resolve(handle, "nvmlDeviceGetMemoryInfo", &fn->get_memory, &missing) ||
      !Resolve(handle, "nvmlDeviceGetPowerUsage", &fn->get_power, &missing) ||
      !Resolve(handle, "nvmlDeviceGetTemperature", &fn->get_temperature, &missing)) {
    dlclose(handle);
    return absl::UnavailableError(StrCat(library, " lacks ", missing));
  }
  if (const NvmlReturn rc = fn->init(); rc != kNvmlSuccess) {
    const std::string error = fn->Error(rc);
    dlclose(handle);
    return absl::FailedPreconditionError(StrCat("NVML did not start: ", error));
  }
  unsigned int count = 0;
  if (const NvmlReturn rc = fn->get_count(&count); rc != kNvmlSuccess || count == 0) {
    const std::string why = rc != kNvmlSuccess ? fn->Error(rc) : "it sees no GPU";
    fn->shutdown();
    dlclose(handle);
    return absl::NotFoundError(StrCat("NVML started but ", why));
  }
  return std::unique_ptr<NvmlReader>(
      new NvmlReader(handle, std::move(fn), static_cast<int>(count)));
}

NvmlReader::NvmlReader(void* handle, std::unique_ptr<Functions> functions, int device_count)
    : handle_(handle), fn_(std::move(functions)), device_count_(device_count) {}

NvmlReader::~NvmlReader() {
  fn_->shutdown();
  dlclose(handle_);
}

absl::StatusOr<std::vector<GpuSample>> NvmlReader::Read() {
  std::vector<GpuSample> samples;
  for (int i = 0; i < device_count_; ++i) {
    NvmlDevice device = nullptr;
    if (const NvmlReturn rc = fn_->get_handle(static_cast<unsigned int>(i), &device);
        rc != kNvmlSuccess) {
      // A GPU that fell off the bus, or one this process may no longer see: the others
      // still report.
      continue;
    }
    GpuSample sample;
    sample.index = i;
    char text[kNvmlTextBytes] = {};
    if (fn_->get_uuid(device, text, sizeof(text)) == kNvmlSuccess) sample.uuid = text;
    text[0] = '\0';
    if (fn_->get_name(device, text, sizeof(text)) == kNvmlSuccess) sample.name = text;
    NvmlUtilization utilization{};
    if (fn_->get_utilization(device, &utilization) == kNvmlSuccess) {
      sample.utilization_ratio = utilization.gpu / 100.0;
    }
    NvmlMemory memory{};
    if (fn_->get_memory(device, &memory) == kNvmlSuccess) {
      sample.memory_used_bytes = static_cast<int64_t>(memory.used);
      sample.memory_total_bytes = static_cast<int64_t>(memory.total);
    }
    unsigned int milliwatts = 0;
    if (fn_->get_power(device, &milliwatts) == kNvmlSuccess) {
      sample.power_watts = milliwatts / 1000.0;
    }
    unsigned int celsius = 0;
    if (fn_->get_temperature(device, kNvmlTemperatureGpu, &celsius) == kNvmlSuccess) {
      sample.temperature_celsius = celsius;
    }
    samples.push_back(std::move(sample));
  }
  if (samples.empty()) {
    return absl::UnavailableError(
        StrCat("NVML answers for none of its ", device_count_, " GPU(s)"));
  }
  return samples;
}

void InstallNvmlGpuMetrics() {
  absl::StatusOr<std::unique_ptr<NvmlReader>> reader = NvmlReader::Open(kNvmlLibrary);
  if (!reader.ok()) {
    spdlog::info("GPU metrics: none ({})", std::string(reader.status().message()));
    SetProcessGpuReader(nullptr);
    return;
  }
  spdlog::info("GPU metrics: NVML sees {} GPU(s); inferd_gpu_* series in /metrics",
               (*reader)->device_count());
  SetProcessGpuReader(*std::move(reader));
}

}  // namespace inferd
