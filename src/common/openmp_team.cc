#include "common/openmp_team.h"

#include <dlfcn.h>

namespace inferd {
namespace {

// The runtime is found in the process instead of linked: it is the one LibTorch's wheel ships
// (torch/lib/libgomp.so.1), which llama.cpp's libraries share by soname, and linking a second
// copy from the compiler would give the process two runtimes that each count only their own
// threads.
struct OpenMpRuntime {
  using PauseResource = int (*)(int kind, int device);
  using InitialDevice = int (*)();
  PauseResource pause_resource = nullptr;
  InitialDevice initial_device = nullptr;

  OpenMpRuntime()
      : pause_resource(reinterpret_cast<PauseResource>(dlsym(RTLD_DEFAULT, "omp_pause_resource"))),
        initial_device(
            reinterpret_cast<InitialDevice>(dlsym(RTLD_DEFAULT, "omp_get_initial_device"))) {}
};

constexpr int kOmpPauseSoft = 1;  // omp_pause_soft in omp.h (OpenMP 5.0)

}  // namespace

void ReleaseOpenMpTeam() {
  static const OpenMpRuntime runtime;
  if (runtime.pause_resource == nullptr || runtime.initial_device == nullptr) return;
  // Frees the calling thread's team only; fails (-1) inside a parallel region, which the
  // callers are never in.
  (void)runtime.pause_resource(kOmpPauseSoft, runtime.initial_device());
}

}  // namespace inferd
