// ModelInferRequest -> InferRequest and InferResponse -> ModelInferResponse.
//
// Inputs come either as raw_input_contents (one little-endian buffer per input, BYTES as
// 4-byte length + bytes per element) or as typed InferTensorContents; outputs always go back
// as raw_output_contents, which every Open Inference Protocol client reads.
#ifndef INFERD_FRONTENDS_GRPC_GRPC_INFER_CODEC_H_
#define INFERD_FRONTENDS_GRPC_GRPC_INFER_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/backend/infer_request.h"
#include "inference_service.pb.h"
#include "shm/shared_memory_registry.h"

namespace inferd {

// InvalidArgument naming the limit when the request's id is longer than kMaxClientIdBytes
// (core/backend/infer_request.h): every response, and every piece of a streamed generation, echoes
// it. Checked first, before the id is copied anywhere.
absl::Status CheckGrpcRequestId(const inference::ModelInferRequest& request);

// Decodes the id, the tensors, requested outputs and the "priority" / "timeout" parameters
// (no on_complete). The tensors own copies of their bytes, so `request` may be freed before
// the model runs. Errors are InvalidArgument and name the input (NotFound for an unregistered
// shared-memory region). Inputs and requested outputs with "shared_memory_region"
// parameters name regions of the caller, `shared_memory` (null: refused); the outputs go to
// `shared_memory_outputs`.
absl::StatusOr<std::unique_ptr<InferRequest>> DecodeGrpcInferRequest(
    const inference::ModelInferRequest& request, const SharedMemoryScope* shared_memory = nullptr,
    SharedMemoryOutputs* shared_memory_outputs = nullptr);

// Fills `out` with the outputs of a successful `response`. Outputs in `shared_memory`
// (written there already) get an empty raw entry, keeping the entries in output order, and
// parameters naming their region and size.
void EncodeGrpcInferResponse(std::string_view model_name, int64_t version, std::string_view id,
                             const InferResponse& response, inference::ModelInferResponse* out,
                             const SharedMemoryOutputs* shared_memory = nullptr);

// "" -> nullopt (the highest ready version); "3" -> 3; anything else InvalidArgument.
absl::StatusOr<std::optional<int64_t>> ParseGrpcVersion(std::string_view version);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_GRPC_GRPC_INFER_CODEC_H_
