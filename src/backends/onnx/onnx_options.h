// The onnx backend's per-model settings: config.yaml `parameters:` and the `precision:` /
// device combinations ONNX Runtime's CPU build can serve.
//
// Free of ONNX Runtime types, so the rules are unit-tested without the engine.
#ifndef INFERD_BACKENDS_ONNX_ONNX_OPTIONS_H_
#define INFERD_BACKENDS_ONNX_ONNX_OPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/model_config.h"

namespace inferd {

enum class GraphOptimization { kDisabled, kBasic, kExtended, kAll };

// Which ONNX Runtime execution provider runs the model's graph.
enum class ExecutionProvider { kCpu, kCuda };

// config.yaml `parameters:` for backend onnx:
//   graph_optimization_level: disabled|basic|extended|all  (default all: ORT's default)
//   intra_op_threads: N   threads one Run may use; 0 (default): the backend's default
//   inter_op_threads: N   > 1 runs independent graph branches in parallel; default 1
//   allow_spinning: true|false  whether idle pool threads spin waiting for work. Default
//                         false, unlike ORT: spinning threads take the cores the I/O threads
//                         and other models' instances need. Measured on the 2-core machine
//                         under shared load, text_classifier batch 1 with 2 threads: 54 ms
//                         p50 spinning, 28 ms not.
//   execution_provider: cpu|cuda  the ONNX Runtime provider that runs the graph (default
//                         cpu). cuda is refused at load where the ONNX Runtime library has
//                         no CUDA provider (CheckExecutionProvider), as in this build.
struct OnnxModelOptions {
  GraphOptimization optimization = GraphOptimization::kAll;
  int intra_op_threads = 0;
  int inter_op_threads = 1;
  bool allow_spinning = false;
  ExecutionProvider execution_provider = ExecutionProvider::kCpu;
};

absl::StatusOr<OnnxModelOptions> ParseOnnxModelOptions(const ModelConfig& config,
                                                       const std::string& config_path);

// OK when the provider `options` name can run here. `available` is ONNX Runtime's
// GetAvailableProviders() ("CPUExecutionProvider", "CUDAExecutionProvider", ...) and
// `library` its version, both named in the error. cuda where the library has the CUDA
// provider is refused too (Unimplemented): inferd does not yet place an ONNX session on a
// GPU, which needs the onnxruntime_gpu libraries and a GPU to test (docs/gpu.md).
absl::Status CheckExecutionProvider(const OnnxModelOptions& options,
                                    const std::vector<std::string>& available,
                                    std::string_view library, const std::string& config_path);

// OK when this build can serve `config.precision` on every device the config names: the
// library here is ONNX Runtime's CPU build, which runs fp32 and int8 (quantized) graphs; its
// CPU kernels for fp16/bf16 cover too few operators to serve a converted graph.
absl::Status CheckOnnxPrecisionAndDevices(const ModelConfig& config,
                                          const std::string& config_path);

// For precision int8: OK when the file says it was quantized, either through ORT's quantizer
// (producer_name "onnx.quantize") or through metadata `inferd.precision: int8` (which
// tools/optimize/quantize writes). `producer` and `declared` come from the model's metadata.
absl::Status CheckQuantizedModel(const ModelConfig& config, std::string_view producer,
                                 std::string_view declared, const std::string& model_path);

// The metadata key tools/optimize writes with the precision a file was made for.
inline constexpr char kPrecisionMetadataKey[] = "inferd.precision";

}  // namespace inferd

#endif  // INFERD_BACKENDS_ONNX_ONNX_OPTIONS_H_
