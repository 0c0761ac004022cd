// The ONNX Runtime backend: serves ONNX files (`model.onnx`) on the CPU.
//
// One ORT environment per process (created with the backend); one session per model version,
// shared by all of that version's execution instances (ORT sessions are thread-safe for Run).
// Inputs and outputs pass through an I/O binding without copies: request buffers are bound as
// inputs, and ORT's output buffers become the response tensors. Only this folder includes ORT
// headers; every ORT error is converted to a Status in here.
#ifndef INFERD_BACKENDS_ONNX_ONNX_BACKEND_H_
#define INFERD_BACKENDS_ONNX_ONNX_BACKEND_H_

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/config_completer.h"

namespace inferd {

struct OnnxBackendOptions {
  // Default threads one Run may use when a config sets no parameters.intra_op_threads. 0: the
  // cores this process may run on divided by the largest instance count of any onnx model,
  // so that the instances of one model running at once do not oversubscribe the cores.
  int intra_op_threads = 0;
};

class OnnxBackend : public Backend, public ConfigCompleter {
 public:
  explicit OnnxBackend(OnnxBackendOptions options);
  ~OnnxBackend() override;

  std::string_view name() const override { return "onnx"; }
  std::string_view platform() const override { return "onnxruntime_onnx"; }
  std::string_view model_filename() const override { return "model.onnx"; }

  void Prepare(const std::vector<const ModelConfig*>& configs) override;
  // Reads the graph's inputs and outputs (names, element types, dims, a dynamic batch axis)
  // from a session on the file, for what config.yaml left out (CompleteConfigFromGraph).
  absl::StatusOr<ModelConfig> CompleteConfig(const ModelConfig& config,
                                             const std::filesystem::path& version_dir) override;
  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override;

  // "1.23.2", or why the library cannot be used, for the startup summary.
  std::string Describe() const;

 private:
  struct Engine;  // the ORT environment; defined in the .cc so ORT types stay out of here

  const OnnxBackendOptions options_;
  std::atomic<int> default_intra_op_threads_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_ONNX_ONNX_BACKEND_H_
