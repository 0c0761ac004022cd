#include "core/service/infer_as_generation.h"

#include <span>
#include <string_view>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/model/request_validator.h"
#include "core/types/bytes_tensor.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<GenerateRequest>> GenerationFromInfer(const ModelConfig& config,
                                                                     InferRequest& request) {
  RETURN_IF_ERROR(ValidateAndOrderInputs(config, request));
  if (request.inputs.size() != 1 || request.inputs[0].tensor.type() != DataType::kBytes) {
    return absl::InvalidArgumentError(
        StrCat("model '", config.name, "' generates text: it takes one BYTES input (the prompt)"));
  }
  const std::vector<std::string_view> prompts = BytesElements(request.inputs[0].tensor);
  if (prompts.size() != 1) {
    return absl::InvalidArgumentError(StrCat(request.inputs[0].name, " must hold one prompt, got ",
                                             prompts.size(), " (send one request each)"));
  }
  auto generation = std::make_unique<GenerateRequest>();
  generation->id = request.id;
  generation->prompt = std::string(prompts[0]);
  generation->cache_partition = request.tenant;
  if (request.cancelled) generation->cancelled = request.cancelled;
  return generation;
}

InferResponse InferResponseFromText(const std::string& text) {
  InferResponse response;
  const std::string_view element(text);
  absl::StatusOr<Tensor> tensor = MakeBytesTensor(Shape{1}, std::span(&element, 1));
  if (!tensor.ok()) {
    response.status = tensor.status();
    return response;
  }
  response.outputs.push_back(NamedTensor{"text_output", *std::move(tensor)});
  response.batch_size = 1;
  return response;
}

}  // namespace inferd
