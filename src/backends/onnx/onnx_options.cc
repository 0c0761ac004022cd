#include "backends/onnx/onnx_options.h"

#include <algorithm>
#include <charconv>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

absl::StatusOr<int> ParseThreads(const std::string& value, std::string_view field,
                                 const std::string& config_path) {
  int n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < 0 || n > 1024) {
    return absl::InvalidArgumentError(
        StrCat(config_path, ": ", field, ": must be a thread count 0..1024, got '", value, "'"));
  }
  return n;
}

}  // namespace

absl::StatusOr<OnnxModelOptions> ParseOnnxModelOptions(const ModelConfig& config,
                                                       const std::string& config_path) {
  OnnxModelOptions options;
  for (const auto& [key, value] : config.parameters) {
    const std::string field = StrCat("parameters.", key);
    if (key == "graph_optimization_level") {
      if (value == "disabled") {
        options.optimization = GraphOptimization::kDisabled;
      } else if (value == "basic") {
        options.optimization = GraphOptimization::kBasic;
      } else if (value == "extended") {
        options.optimization = GraphOptimization::kExtended;
      } else if (value == "all") {
        options.optimization = GraphOptimization::kAll;
      } else {
        return absl::InvalidArgumentError(
            StrCat(config_path, ": ", field, ": must be disabled, basic, extended or all, got '",
                   value, "'"));
      }
    } else if (key == "intra_op_threads") {
      ASSIGN_OR_RETURN(options.intra_op_threads, ParseThreads(value, field, config_path));
    } else if (key == "inter_op_threads") {
      ASSIGN_OR_RETURN(options.inter_op_threads, ParseThreads(value, field, config_path));
    } else if (key == "allow_spinning") {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            StrCat(config_path, ": ", field, ": must be true or false, got '", value, "'"));
      }
      options.allow_spinning = value == "true";
    } else if (key == "execution_provider") {
      if (value == "cpu") {
        options.execution_provider = ExecutionProvider::kCpu;
      } else if (value == "cuda") {
        options.execution_provider = ExecutionProvider::kCuda;
      } else {
        return absl::InvalidArgumentError(
            StrCat(config_path, ": ", field, ": must be cpu or cuda, got '", value, "'"));
      }
    } else {
      return absl::InvalidArgumentError(
          StrCat(config_path, ": ", field,
                 ": unknown parameter for backend 'onnx' (known: graph_optimization_level, "
                 "intra_op_threads, inter_op_threads, allow_spinning, execution_provider)"));
    }
  }
  return options;
}

absl::Status CheckExecutionProvider(const OnnxModelOptions& options,
                                    const std::vector<std::string>& available,
                                    std::string_view library, const std::string& config_path) {
  if (options.execution_provider == ExecutionProvider::kCpu) return absl::OkStatus();
  constexpr std::string_view kCudaProvider = "CUDAExecutionProvider";
  if (std::find(available.begin(), available.end(), kCudaProvider) == available.end()) {
    std::string offered;
    for (const std::string& p : available) offered += StrCat(offered.empty() ? "" : ", ", p);
    return absl::FailedPreconditionError(StrCat(
        config_path, ": parameters.execution_provider: cuda: this server's ONNX Runtime ", library,
        " has no ", kCudaProvider, " (it offers ", offered.empty() ? "none" : offered,
        "); serve with execution_provider: cpu, or use backend 'torch' on device cuda"));
  }
  return absl::UnimplementedError(
      StrCat(config_path, ": parameters.execution_provider: cuda: ONNX Runtime ", library,
             " has the CUDA provider, but inferd does not yet place ONNX sessions on a GPU "
             "(docs/gpu.md)"));
}

absl::Status CheckOnnxPrecisionAndDevices(const ModelConfig& config,
                                          const std::string& config_path) {
  for (const InstanceGroup& group : config.instances) {
    if (group.device != "cpu") {
      return absl::InvalidArgumentError(
          StrCat(config_path, ": instances: device '", group.device,
                 "': this build's ONNX Runtime is the CPU library (only device cpu)"));
    }
  }
  if (config.precision == Precision::kFp16 || config.precision == Precision::kBf16) {
    return absl::InvalidArgumentError(StrCat(
        config_path, ": precision: ", PrecisionName(config.precision),
        " is not supported by backend 'onnx' on device cpu (ONNX Runtime's CPU provider lacks ",
        PrecisionName(config.precision),
        " kernels for most operators); serve fp32 or int8 here, or use backend 'torch' for "
        "bf16 on the CPU"));
  }
  return absl::OkStatus();
}

absl::Status CheckQuantizedModel(const ModelConfig& config, std::string_view producer,
                                 std::string_view declared, const std::string& model_path) {
  const bool quantized = producer == "onnx.quantize" || declared == "int8";
  if (config.precision == Precision::kInt8 && !quantized) {
    return absl::InvalidArgumentError(
        StrCat(model_path,
               ": config.yaml declares precision int8 but this is not a quantized "
               "model (producer '",
               producer,
               "'); quantize it with `python -m tools.optimize.quantize`, or declare precision "
               "fp32"));
  }
  if (config.precision == Precision::kFp32 && quantized) {
    return absl::InvalidArgumentError(
        StrCat(model_path,
               ": a quantized (int8) model, but config.yaml declares precision fp32 (the "
               "default); declare `precision: int8` so clients and reports see what runs"));
  }
  return absl::OkStatus();
}

}  // namespace inferd
