// config.yaml `precision:` for the torch backend: which precisions LibTorch serves on the
// CPU, whether a TorchScript file really is quantized, and the casts bf16 serving needs.
//
//   fp32  the file as saved
//   int8  a dynamically quantized TorchScript file (quantized::* ops; tools/optimize/quantize
//         --engine torch writes them); checked at load
//   bf16  weights converted to bfloat16 at load (before freezing); float inputs are cast to
//         bf16 and bf16 outputs back to the datatype config.yaml declares, so clients keep
//         sending and receiving FP32. Needs an unfrozen file (a frozen one holds its weights
//         as graph constants, which the conversion cannot reach).
//   fp16  on a CUDA device as bf16 is on the CPU: weights converted to half at load, float
//         inputs cast to half, half outputs back to the declared datatype. Rejected on the
//         CPU (LibTorch's CPU fp16 kernels are slow or missing), naming the device.
#ifndef INFERD_BACKENDS_TORCH_TORCH_PRECISION_H_
#define INFERD_BACKENDS_TORCH_TORCH_PRECISION_H_

#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <torch/csrc/jit/api/module.h>

#include "absl/status/status.h"
#include "core/config/model_config.h"

namespace inferd {

// Whether any method of the module or its submodules calls a quantized::* operator.
bool HasQuantizedOps(const torch::jit::Module& module);

// OK when `config.precision` can be served on `device` and matches the file.
absl::Status CheckTorchPrecision(const ModelConfig& config, const torch::jit::Module& module,
                                 const std::string& file, const std::string& config_path,
                                 const c10::Device& device);

// The floating-point type the module computes in for `precision` (bf16, fp16), or none
// when it keeps the file's types (fp32, int8).
std::optional<at::ScalarType> ServingFloatType(Precision precision);

// The tensor the module receives for a request input.
at::Tensor ToModelInput(at::Tensor input, Precision precision);

// The tensor the response carries for a module output declared as `declared`.
at::Tensor ToDeclaredOutput(at::Tensor output, DataType declared);

}  // namespace inferd

#endif  // INFERD_BACKENDS_TORCH_TORCH_PRECISION_H_
