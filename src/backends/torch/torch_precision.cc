#include "backends/torch/torch_precision.h"

#include <string_view>

#include "common/strings.h"

namespace inferd {
namespace {

bool BlockHasQuantizedOps(const torch::jit::Block* block) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (std::string_view(node->kind().toQualString()).starts_with("quantized::")) return true;
    for (const torch::jit::Block* sub : node->blocks()) {
      if (BlockHasQuantizedOps(sub)) return true;
    }
  }
  return false;
}

}  // namespace

bool HasQuantizedOps(const torch::jit::Module& module) {
  for (const torch::jit::Module& m : module.modules()) {
    for (const torch::jit::Method& method : m.get_methods()) {
      if (BlockHasQuantizedOps(method.graph()->block())) return true;
    }
  }
  return false;
}

absl::Status CheckTorchPrecision(const ModelConfig& config, const torch::jit::Module& module,
                                 const std::string& file, const std::string& config_path,
                                 const c10::Device& device) {
  const bool quantized = HasQuantizedOps(module);
  switch (config.precision) {
    case Precision::kFp16:
      if (!device.is_cuda()) {
        return absl::InvalidArgumentError(
            StrCat(config_path, ": precision: fp16 is not supported by backend 'torch' on device ",
                   device.str(),
                   " (LibTorch's CPU fp16 kernels are slow or missing); use bf16 on the CPU, "
                   "or fp16 on a CUDA device (instances: [{device: cuda:0}])"));
      }
      if (quantized) {
        return absl::InvalidArgumentError(
            StrCat(file,
                   ": a quantized (int8) module, but config.yaml declares precision fp16; "
                   "declare `precision: int8`"));
      }
      return absl::OkStatus();
    case Precision::kInt8:
      if (!quantized) {
        return absl::InvalidArgumentError(
            StrCat(file,
                   ": config.yaml declares precision int8 but the module calls no quantized "
                   "operator; quantize it with `python -m tools.optimize.quantize --engine "
                   "torch`, or declare precision fp32"));
      }
      return absl::OkStatus();
    case Precision::kFp32:
    case Precision::kBf16:
      if (quantized) {
        return absl::InvalidArgumentError(
            StrCat(file, ": a quantized (int8) module, but config.yaml declares precision ",
                   PrecisionName(config.precision), "; declare `precision: int8`"));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

std::optional<at::ScalarType> ServingFloatType(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return at::kBFloat16;
    case Precision::kFp16:
      return at::kHalf;
    case Precision::kFp32:
    case Precision::kInt8:
      return std::nullopt;
  }
  return std::nullopt;
}

at::Tensor ToModelInput(at::Tensor input, Precision precision) {
  const std::optional<at::ScalarType> serving = ServingFloatType(precision);
  if (serving && input.is_floating_point() && input.scalar_type() != *serving) {
    return input.to(*serving);
  }
  return input;
}

at::Tensor ToDeclaredOutput(at::Tensor output, DataType declared) {
  const bool reduced = output.scalar_type() == at::kBFloat16 || output.scalar_type() == at::kHalf;
  if (reduced && declared == DataType::kFp32) return output.to(at::kFloat);
  return output;
}

}  // namespace inferd
