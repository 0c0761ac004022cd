// CUDA for the LibTorch backend, loaded at run time.
//
// inferd links only libtorch_cpu. The first model that asks for a CUDA device makes it load
// libtorch_cuda.so from the same torch folder (with the CUDA libraries it pulls in, about
// 2 GB mapped), which registers LibTorch's CUDA kernels and hooks. So CPU-only machines pay
// nothing, and one binary serves GPUs wherever a driver and a device are present. Everything
// here uses LibTorch's device-generic API (c10 streams, the accelerator allocator), so it
// compiles without a CUDA toolkit.
#ifndef INFERD_BACKENDS_TORCH_TORCH_CUDA_H_
#define INFERD_BACKENDS_TORCH_TORCH_CUDA_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "core/types/device.h"

namespace inferd {

// Loads libtorch_cuda.so once per process; later calls return the first outcome. The error
// names the file and the loader's message.
absl::Status EnsureTorchCudaLoaded();

// CUDA devices this process sees (after CUDA_VISIBLE_DEVICES); 0 before a successful
// EnsureTorchCudaLoaded, or without a driver or a device.
int VisibleCudaDevices();

// OK when `device` can take a model here: loads CUDA support and checks that the device
// exists. The error says why not (no driver, no device, index out of range), with the
// CUDA_VISIBLE_DEVICES in force.
absl::Status CheckCudaDevice(const Device& device);

// Bytes the CUDA caching allocator has handed out on `index` (tensors alive), or nullopt
// when CUDA is not loaded.
std::optional<int64_t> CudaAllocatedBytes(int index);

// Returns the caching allocator's unused blocks to the driver (after a model is unloaded,
// so that nvidia-smi shows the memory free). No-op when CUDA is not loaded.
void ReleaseCachedCudaMemory();

}  // namespace inferd

#endif  // INFERD_BACKENDS_TORCH_TORCH_CUDA_H_
