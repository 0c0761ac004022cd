#include "backends/torch/torch_cuda.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include <ATen/DeviceAccelerator.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include "common/strings.h"

namespace inferd {
namespace {

std::atomic<bool> cuda_loaded{false};

// The folder of the libtorch_cpu.so this process runs: libtorch_cuda.so must come from the
// same build.
std::filesystem::path TorchLibraryDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::get_num_threads), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  return std::filesystem::path(info.dli_fname).parent_path();
}

std::string VisibleDevicesSetting() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible == nullptr ? "CUDA_VISIBLE_DEVICES is not set"
                            : StrCat("CUDA_VISIBLE_DEVICES='", visible, "'");
}

bool DriverPresent() {
  // Loading (not just finding) the driver library would initialise nothing yet; the handle
  // stays open as LibTorch opens it anyway.
  return dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL) != nullptr;
}

}  // namespace

absl::Status EnsureTorchCudaLoaded() {
  static std::once_flag once;
  static absl::Status outcome;
  std::call_once(once, [] {
    const std::filesystem::path library = TorchLibraryDir() / "libtorch_cuda.so";
    // RTLD_GLOBAL: the CUDA kernels register themselves with LibTorch's dispatcher, and
    // libraries loaded later (the TorchScript runtime's CUDA fusers) resolve against it.
    if (dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* error = dlerror();
      outcome = absl::FailedPreconditionError(StrCat(
          "CUDA support could not be loaded from ", library.string(), ": ",
          error != nullptr ? error : "unknown error", " (this LibTorch may be a CPU-only build)"));
      return;
    }
    cuda_loaded = true;
  });
  return outcome;
}

int VisibleCudaDevices() {
  if (!cuda_loaded) return 0;
  return at::detail::getCUDAHooks().deviceCount();
}

absl::Status CheckCudaDevice(const Device& device) {
  if (!device.is_cuda()) return absl::OkStatus();
  if (absl::Status loaded = EnsureTorchCudaLoaded(); !loaded.ok()) return loaded;
  const int count = VisibleCudaDevices();
  if (count == 0) {
    return absl::FailedPreconditionError(StrCat(
        "device '", device.ToString(), "': no CUDA device is visible to this process (",
        DriverPresent() ? "the NVIDIA driver is installed" : "no NVIDIA driver (libcuda.so.1)",
        "; ", VisibleDevicesSetting(), ")"));
  }
  if (device.index >= count) {
    return absl::FailedPreconditionError(
        StrCat("device '", device.ToString(), "': this process sees ", count,
               " CUDA device(s), cuda:0 to cuda:", count - 1, " (", VisibleDevicesSetting(), ")"));
  }
  return absl::OkStatus();
}

std::optional<int64_t> CudaAllocatedBytes(int index) {
  if (!cuda_loaded || index >= VisibleCudaDevices()) return std::nullopt;
  const auto stats = at::accelerator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  constexpr size_t kAggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  return stats.allocated_bytes[kAggregate].current;
}

void ReleaseCachedCudaMemory() {
  if (cuda_loaded && VisibleCudaDevices() > 0) at::accelerator::emptyCache();
}

}  // namespace inferd
