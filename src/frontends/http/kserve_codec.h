// The KServe v2 (Open Inference Protocol) JSON bodies for inference.
#ifndef INFERD_FRONTENDS_HTTP_KSERVE_CODEC_H_
#define INFERD_FRONTENDS_HTTP_KSERVE_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/infer_request.h"

namespace inferd {

// Decodes {"id", "inputs": [{"name","datatype","shape","data"}], "outputs": [{"name"}]} into a
// request (without on_complete). Errors are InvalidArgument and name the field.
absl::StatusOr<std::unique_ptr<InferRequest>> DecodeInferRequest(std::string& body);

// {"model_name", "model_version", "id", "outputs": [{"name","datatype","shape","data"}]}.
std::string EncodeInferResponse(std::string_view model_name, int64_t version, std::string_view id,
                                const InferResponse& response);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_KSERVE_CODEC_H_
