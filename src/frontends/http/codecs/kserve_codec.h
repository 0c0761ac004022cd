// The KServe v2 (Open Inference Protocol) JSON bodies for inference.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_KSERVE_CODEC_H_
#define INFERD_FRONTENDS_HTTP_CODECS_KSERVE_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/backend/infer_request.h"
#include "frontends/http/codecs/binary_tensor_reader.h"
#include "shm/shared_memory_registry.h"

namespace inferd {

// Which outputs the client wants as binary data (the binary tensor extension): the request
// parameter "binary_data_output" sets the default; an output's "binary_data" overrides it.
struct BinaryOutputs {
  bool all = false;
  std::vector<std::pair<std::string, bool>> per_output;
  bool IsBinary(std::string_view name) const;
};

// Where the outputs of one request go besides inline JSON "data": the binary section, or
// shared-memory regions.
struct OutputDestinations {
  BinaryOutputs binary;
  SharedMemoryOutputs shared_memory;
};

// What a body may refer to beyond its JSON; each null when the extension is not in use.
struct InferBodyExtensions {
  // The binary tensor extension: `body` is the JSON header only, and inputs with a
  // "binary_data_size" parameter are read from here.
  BinaryTensorReader* binary = nullptr;
  // The shared-memory extension: inputs and outputs with a "shared_memory_region" parameter,
  // which names one of the caller's regions.
  const SharedMemoryScope* shared_memory = nullptr;
  // Receives which outputs go back as binary or into shared memory.
  OutputDestinations* outputs = nullptr;
};

// Decodes {"id", "inputs": [{"name","datatype","shape","data"}], "outputs": [{"name"}]} into a
// request (without on_complete). Errors are InvalidArgument and name the field (NotFound
// for an unregistered shared-memory region).
absl::StatusOr<std::unique_ptr<InferRequest>> DecodeInferRequest(
    std::string& body, const InferBodyExtensions& extensions = {});

// {"model_name", "model_version", "id", "outputs": [{"name","datatype","shape","data"}]}.
// An output that `destinations` sends as binary gets "parameters": {"binary_data_size": N}
// instead of "data", and its bytes are appended to `binary_data`, in output order; one in
// shared memory (written there already) gets "parameters": {"shared_memory_region",
// "shared_memory_byte_size"} and no data.
std::string EncodeInferResponse(std::string_view model_name, int64_t version, std::string_view id,
                                const InferResponse& response,
                                const OutputDestinations* destinations = nullptr,
                                std::string* binary_data = nullptr);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_KSERVE_CODEC_H_
