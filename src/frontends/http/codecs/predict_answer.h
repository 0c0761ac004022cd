// The answer POST /predict gives for a pipeline whose config.yaml names an `answer`
// (labels and scores outputs, as top_k gives them): for one instance
//   {"label": "tabby", "score": 0.91, "top_k": [{"label": "tabby", "score": 0.91}, ...]}
// and {"output": [{...}, {...}]} for a batch. KServe, gRPC and TF-Serving return the tensors.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_PREDICT_ANSWER_H_
#define INFERD_FRONTENDS_HTTP_CODECS_PREDICT_ANSWER_H_

#include <optional>
#include <string>

#include "core/backend/infer_request.h"
#include "core/config/model_config.h"

namespace inferd {

// The JSON answer, or std::nullopt when the model has no `answer` (or the outputs it names
// are missing or malformed: the caller then answers with the tensors).
std::optional<std::string> EncodeLabelAnswer(const ModelConfig& config,
                                             const InferResponse& response, bool single_instance);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_PREDICT_ANSWER_H_
