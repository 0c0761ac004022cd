#include "core/model/request_validator.h"

#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// "'a', 'b'"
std::string QuotedNames(const std::vector<TensorSpec>& specs) {
  std::string names;
  for (const TensorSpec& spec : specs) {
    StrAppend(&names, names.empty() ? "'" : ", '", spec.name, "'");
  }
  return names;
}

std::string InputNames(const ModelConfig& config) { return QuotedNames(config.inputs); }
std::string OutputNames(const ModelConfig& config) { return QuotedNames(config.outputs); }

}  // namespace

absl::Status CheckShape(const ModelConfig& config, const TensorSpec& spec, const Shape& shape) {
  const Shape expected = config.FullShape(spec);
  auto mismatch = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat(
        "input '", spec.name, "': shape ", ShapeToString(shape), " is not accepted by model '",
        config.name, "', which expects ", ShapeToString(expected), " (-1 = any size",
        config.batched() ? ", first = batch" : "", "): ", why));
  };
  if (shape.size() != expected.size()) {
    return mismatch(StrCat("expected ", expected.size(), " dimensions, got ", shape.size()));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (expected[i] != -1 && shape[i] != expected[i]) {
      return mismatch(StrCat("dimension ", i, " must be ", expected[i]));
    }
    if (shape[i] < 0) return mismatch(StrCat("dimension ", i, " is negative"));
  }
  if (config.batched()) {
    if (shape[0] < 1) return mismatch("the batch size must be at least 1");
    if (shape[0] > config.max_batch_size) {
      return mismatch(
          StrCat("the batch size ", shape[0], " exceeds max_batch_size ", config.max_batch_size));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAndOrderInputs(const ModelConfig& config, InferRequest& request) {
  if (request.priority < 0 || request.priority > config.queue.priority_levels) {
    return absl::InvalidArgumentError(
        StrCat("priority ", request.priority, " is out of range: model '", config.name,
               "' has priority levels 1 (highest) to ", config.queue.priority_levels));
  }
  if (request.timeout_us < 0 || request.timeout_us > kMaxTimeoutUs) {
    return absl::InvalidArgumentError(StrCat(
        "timeout ", request.timeout_us, " us is out of range 0..", kMaxTimeoutUs, " (one day)"));
  }
  std::vector<NamedTensor> ordered(config.inputs.size());
  std::vector<bool> seen(config.inputs.size(), false);
  for (NamedTensor& input : request.inputs) {
    size_t index = 0;
    while (index < config.inputs.size() && config.inputs[index].name != input.name) ++index;
    if (index == config.inputs.size()) {
      return absl::InvalidArgumentError(StrCat("unknown input '", input.name, "': model '",
                                               config.name, "' takes ", InputNames(config)));
    }
    if (seen[index]) {
      return absl::InvalidArgumentError(StrCat("input '", input.name, "' is given twice"));
    }
    seen[index] = true;
    const TensorSpec& spec = config.inputs[index];
    if (input.tensor.type() != spec.datatype) {
      return absl::InvalidArgumentError(
          StrCat("input '", input.name, "': datatype ", DataTypeName(input.tensor.type()),
                 " does not match the model's ", DataTypeName(spec.datatype)));
    }
    RETURN_IF_ERROR(CheckShape(config, spec, input.tensor.shape()));
    ordered[index] = std::move(input);
  }
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    if (!seen[i]) {
      return absl::InvalidArgumentError(StrCat("missing input '", config.inputs[i].name,
                                               "': model '", config.name, "' takes ",
                                               InputNames(config)));
    }
  }
  if (config.batched()) {
    const int64_t batch = ordered[0].tensor.shape()[0];
    for (const NamedTensor& input : ordered) {
      if (input.tensor.shape()[0] != batch) {
        return absl::InvalidArgumentError(StrCat("inputs disagree on the batch size: '",
                                                 ordered[0].name, "' has ", batch, ", '",
                                                 input.name, "' has ", input.tensor.shape()[0]));
      }
    }
  }
  for (size_t i = 0; i < request.requested_outputs.size(); ++i) {
    const std::string& output = request.requested_outputs[i];
    for (size_t j = 0; j < i; ++j) {
      if (request.requested_outputs[j] == output) {
        return absl::InvalidArgumentError(StrCat("output '", output, "' is requested twice"));
      }
    }
    if (config.FindOutput(output) == nullptr) {
      return absl::InvalidArgumentError(StrCat("unknown requested output '", output, "': model '",
                                               config.name, "' gives ", OutputNames(config)));
    }
  }
  request.inputs = std::move(ordered);
  return absl::OkStatus();
}

}  // namespace inferd
