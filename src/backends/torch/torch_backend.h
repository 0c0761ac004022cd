// The LibTorch backend: serves TorchScript files (`model.pt`) on the CPU, or on a CUDA
// device where one is present (torch_cuda.h: CUDA support is loaded at run time).
//
// This folder is the only place that includes LibTorch headers (they compile slowly); the
// rest of inferd sees the Backend interface. Every c10::Error and std::exception LibTorch
// throws is converted to a Status in torch_backend.cc.
#ifndef INFERD_BACKENDS_TORCH_TORCH_BACKEND_H_
#define INFERD_BACKENDS_TORCH_TORCH_BACKEND_H_

#include <atomic>
#include <memory>
#include <string_view>

#include "core/backend/backend.h"
#include "core/backend/config_completer.h"

namespace inferd {

struct TorchBackendOptions {
  // Threads one forward pass may use (LibTorch's intra-op pool) unless a model's
  // `parameters.intra_op_threads` says otherwise. 0: the cores this process may run on,
  // divided by the largest instance count of any model, so that the instances of one model
  // running at once never oversubscribe the cores. LibTorch defaulted to 1 here, which
  // leaves cores idle on large models.
  int intra_op_threads = 0;
};

// Config parameters the backend understands (config.yaml `parameters:`):
//   freeze: true|false                  torch.jit.freeze at load (default true; falls back to
//                                       the unfrozen module with a warning if freezing fails)
//   optimize_for_inference: true|false  torch.jit.optimize_for_inference (default false:
//                                       it can change results in the last bits)
//   intra_op_threads: N                 threads one forward pass of this model may use
//                                       (default: the backend's; with auto_tune the tuner
//                                       may pick 1 instead, unless this or
//                                       --intra-op-threads fixes the count). Small models
//                                       do best with 1: a second thread costs more in
//                                       hand-offs than it saves, and takes the core that
//                                       the I/O threads and other models need.
class TorchBackend : public Backend, public ConfigCompleter {
 public:
  explicit TorchBackend(TorchBackendOptions options);

  std::string_view name() const override { return "torch"; }
  std::string_view platform() const override { return "pytorch_libtorch"; }
  std::string_view model_filename() const override { return "model.pt"; }

  void Prepare(const std::vector<const ModelConfig*>& configs) override;
  // A TorchScript file names forward's arguments but records no datatypes or shapes: this
  // completes nothing and says what config.yaml must add, with the argument names.
  absl::StatusOr<ModelConfig> CompleteConfig(const ModelConfig& config,
                                             const std::filesystem::path& version_dir) override;
  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override;

  // The default intra-op thread count (models may set their own), for the startup summary.
  int intra_op_threads() const;

 private:
  const TorchBackendOptions options_;
  std::atomic<int> default_intra_op_threads_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_TORCH_TORCH_BACKEND_H_
