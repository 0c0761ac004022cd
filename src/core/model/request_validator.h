// Checks a request's tensors against the model's declared signature before it is queued, so
// that a bad request is answered at once with a message naming the problem and never reaches
// an engine.
#ifndef INFERD_CORE_MODEL_REQUEST_VALIDATOR_H_
#define INFERD_CORE_MODEL_REQUEST_VALIDATOR_H_

#include "absl/status/status.h"
#include "core/backend/infer_request.h"
#include "core/config/model_config.h"

namespace inferd {

// Validates names, datatypes, shapes and batch sizes, and the requested outputs. On success
// the request's inputs are reordered to the config's input order (the order backends take).
// Errors are InvalidArgument.
absl::Status ValidateAndOrderInputs(const ModelConfig& config, InferRequest& request);

// Checks one shape against a spec: rank, fixed dimensions and the batch limit.
absl::Status CheckShape(const ModelConfig& config, const TensorSpec& spec, const Shape& shape);

}  // namespace inferd

#endif  // INFERD_CORE_MODEL_REQUEST_VALIDATOR_H_
