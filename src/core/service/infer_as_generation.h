// A tensor request (KServe infer, gRPC ModelInfer, TF-Serving, /predict) to a model that
// generates text, as a generation: the prompt in `text_input` (BYTES, one element), the text
// out in `text_output` (the KServe generate extension's names, which a llama model's config
// declares). The generation then takes the same path, limits, deadline and cancellation as
// the generation APIs' (InferencePath::Generate) instead of blocking an execution instance
// on a future, as it once did.
#ifndef INFERD_CORE_SERVICE_INFER_AS_GENERATION_H_
#define INFERD_CORE_SERVICE_INFER_AS_GENERATION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"
#include "core/backend/infer_request.h"
#include "core/config/model_config.h"

namespace inferd {

// The generation `request` asks for, with default sampling and the model's max_tokens. Its
// inputs are validated against `config` first (one BYTES text_input of one element; the only
// output text_output). The deadline is left to the caller. InvalidArgument naming the input.
absl::StatusOr<std::unique_ptr<GenerateRequest>> GenerationFromInfer(const ModelConfig& config,
                                                                     InferRequest& request);

// The infer response for a finished generation: text_output, BYTES [1], holding `text`.
InferResponse InferResponseFromText(const std::string& text);

}  // namespace inferd

#endif  // INFERD_CORE_SERVICE_INFER_AS_GENERATION_H_
