// The narrow interface between the core and an inference engine (LibTorch, ONNX Runtime).
//
// A Backend turns a model file into a BackendModel; a BackendModel executes whole batches.
// Everything an engine throws is converted to a Status inside the backend, so no exception
// ever reaches a scheduler thread.
#ifndef INFERD_CORE_BACKEND_BACKEND_H_
#define INFERD_CORE_BACKEND_BACKEND_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/model_config.h"
#include "core/types/tensor.h"

namespace inferd {

// A loaded model's weights and code, on one device.
// Thread-safety: Execute may be called from several execution instances at once; they share
// one copy of the weights.
class BackendModel {
 public:
  virtual ~BackendModel() = default;

  // Runs the model on `inputs`, one tensor per config input in config order, and returns one
  // tensor per config output in config order.
  virtual absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) = 0;

  // Bytes of the weights this model holds on its device (parameters and buffers), what the
  // memory budget counts; 0 when the engine cannot tell.
  virtual uint64_t memory_bytes() const { return 0; }

  // Intra-op thread counts the batch tuner may compare, the current one first; empty when
  // the count is fixed (by the config, or by a backend that sets it at load).
  virtual std::vector<int> IntraOpThreadChoices() const { return {}; }
  // Later Execute calls, on any thread, use `threads` (one of IntraOpThreadChoices()).
  virtual void SetIntraOpThreads(int threads) { (void)threads; }
  // Later Execute calls choose their count themselves, among the current one, half of it, ...
  // down to one, from their own measured times (common/adaptive_threads.h): a busy process
  // beside the server makes a team of several threads wait on its descheduled member, so the
  // count that was fastest at load may not be later. Called once at load, after the count is
  // chosen; the count then moves only between that one and one.
  virtual void AdaptIntraOpThreads() {}
  // The intra-op threads one Execute uses on a CPU; 0 when the engine does not say.
  virtual int intra_op_threads() const { return 0; }

  // The calling thread will not run this model for a while (the loader after its warm-up
  // runs, an execution instance left idle): the engine may end the helper threads it keeps
  // for calls from this thread, which idle still slow the threads that do run a model
  // (common/openmp_team.h). The next Execute on this thread starts them again.
  virtual void ReleaseCallerThreads() {}
};

struct BackendLoadRequest {
  const ModelConfig* config = nullptr;  // outlives the load call
  std::filesystem::path version_dir;    // <repository>/<model>/<version>
  std::string device = "cpu";
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The name config.yaml uses ("torch").
  virtual std::string_view name() const = 0;
  // The KServe metadata platform string ("pytorch_libtorch").
  virtual std::string_view platform() const = 0;
  // The file a version folder must hold ("model.pt").
  virtual std::string_view model_filename() const = 0;
  // False for a backend whose version folders hold no model file (a pipeline's hold assets
  // only): no digest is taken, so no weight sharing, and no config is guessed from a file.
  virtual bool has_model_file() const { return true; }

  // Called once before any load with the configs of every model that uses this backend, so
  // that process-wide settings (thread pools) can fit all of them.
  virtual void Prepare(const std::vector<const ModelConfig*>& configs) { (void)configs; }

  // Loads a version. Errors name the file and, where it applies, the config field.
  virtual absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_BACKEND_BACKEND_H_
