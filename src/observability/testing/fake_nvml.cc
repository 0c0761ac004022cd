// A stand-in for libnvidia-ml.so.1 with a fixed device table, for nvml_reader_test.cc: built
// as a shared library that NvmlReader::Open loads by path, so the test runs the real dlopen,
// dlsym and unit conversions without a GPU. Exports the NVML functions NvmlReader resolves.
//   FAKE_NVML_DEVICES=N   the GPUs it reports (default 2; 0: NVML starts and sees none)
//   FAKE_NVML_INIT_FAILS=1  nvmlInit_v2 fails as with no driver loaded
#include <cstdlib>
#include <cstring>

namespace {

struct FakeGpu {
  const char* uuid;
  const char* name;
  unsigned int utilization_percent;
  unsigned long long memory_total;  // NOLINT(runtime/int): nvml.h's type
  unsigned long long memory_used;   // NOLINT(runtime/int)
  int power_milliwatts;             // < 0: not supported
  unsigned int temperature;
};

const FakeGpu kGpus[] = {
    {"GPU-0f4a1c9e-fake-0000", "NVIDIA H200", 87, 150'754'820'096ULL, 73'014'444'032ULL, 312'500,
     54},
    // A board that reports no power draw (NVML_ERROR_NOT_SUPPORTED), and a name to escape.
    {"GPU-77d0b3aa-fake-0001", "NVIDIA \"Test\" GPU", 3, 85'899'345'920ULL, 1'048'576ULL, -1, 31},
};

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kDriverNotLoaded = 9;

unsigned int DeviceCount() {
  const char* n = std::getenv("FAKE_NVML_DEVICES");
  return n == nullptr ? 2u : static_cast<unsigned int>(std::atoi(n));
}

const FakeGpu* Gpu(void* device) { return static_cast<const FakeGpu*>(device); }

int CopyText(const char* text, char* out, unsigned int length) {
  if (std::strlen(text) + 1 > length) return kInvalidArgument;
  std::strcpy(out, text);
  return kSuccess;
}

}  // namespace

extern "C" {

struct FakeUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct FakeMemory {
  unsigned long long total;  // NOLINT(runtime/int)
  unsigned long long free;   // NOLINT(runtime/int)
  unsigned long long used;   // NOLINT(runtime/int)
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
  const char* fails = std::getenv("FAKE_NVML_INIT_FAILS");
  return fails != nullptr && fails[0] == '1' ? kDriverNotLoaded : kSuccess;
}
__attribute__((visibility("default"))) int nvmlShutdown() { return kSuccess; }
__attribute__((visibility("default"))) const char* nvmlErrorString(int code) {
  switch (code) {
    case kNotSupported:
      return "Not Supported";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = DeviceCount();
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                         void** device) {
  if (index >= DeviceCount() || index >= sizeof(kGpus) / sizeof(kGpus[0])) {
    return kInvalidArgument;
  }
  *device = const_cast<FakeGpu*>(&kGpus[index]);
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(void* device, char* out,
                                                             unsigned int length) {
  return CopyText(Gpu(device)->uuid, out, length);
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(void* device, char* out,
                                                             unsigned int length) {
  return CopyText(Gpu(device)->name, out, length);
}
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* device,
                                                                         FakeUtilization* out) {
  *out = {Gpu(device)->utilization_percent, 0};
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device, FakeMemory* out) {
  const FakeGpu* gpu = Gpu(device);
  *out = {gpu->memory_total, gpu->memory_total - gpu->memory_used, gpu->memory_used};
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* device,
                                                                   unsigned int* milliwatts) {
  if (Gpu(device)->power_milliwatts < 0) return kNotSupported;
  *milliwatts = static_cast<unsigned int>(Gpu(device)->power_milliwatts);
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* device, int sensor,
                                                                    unsigned int* celsius) {
  if (sensor != 0) return kInvalidArgument;
  *celsius = Gpu(device)->temperature;
  return kSuccess;
}

}  // extern "C"
