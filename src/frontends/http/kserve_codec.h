// The KServe v2 (Open Inference Protocol) JSON bodies for inference.
#ifndef INFERD_FRONTENDS_HTTP_KSERVE_CODEC_H_
#define INFERD_FRONTENDS_HTTP_KSERVE_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/infer_request.h"
#include "frontends/http/binary_tensor_reader.h"

namespace inferd {

// Which outputs the client wants as binary data (the binary tensor extension): the request
// parameter "binary_data_output" sets the default; an output's "binary_data" overrides it.
struct BinaryOutputs {
  bool all = false;
  std::vector<std::pair<std::string, bool>> per_output;
  bool IsBinary(std::string_view name) const;
};

// Decodes {"id", "inputs": [{"name","datatype","shape","data"}], "outputs": [{"name"}]} into a
// request (without on_complete). Errors are InvalidArgument and name the field.
// With the binary extension, `body` is the JSON header only: inputs with a
// "binary_data_size" parameter are read from `binary`, and `binary_outputs` receives which
// outputs to send back as binary.
absl::StatusOr<std::unique_ptr<InferRequest>> DecodeInferRequest(
    std::string& body, BinaryTensorReader* binary = nullptr,
    BinaryOutputs* binary_outputs = nullptr);

// {"model_name", "model_version", "id", "outputs": [{"name","datatype","shape","data"}]}.
// An output that `binary` selects gets "parameters": {"binary_data_size": N} instead of
// "data", and its bytes are appended to `binary_data`, in output order.
std::string EncodeInferResponse(std::string_view model_name, int64_t version, std::string_view id,
                                const InferResponse& response,
                                const BinaryOutputs* binary = nullptr,
                                std::string* binary_data = nullptr);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_KSERVE_CODEC_H_
