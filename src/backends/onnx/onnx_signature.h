// Checks that an ONNX graph's inputs and outputs match what config.yaml declares.
//
// Kept free of ONNX Runtime types so that the rules (names, datatypes, ranks, a dynamic batch
// axis) are unit-tested without the engine; onnx_backend.cc reads the graph's side from the
// session.
#ifndef INFERD_BACKENDS_ONNX_ONNX_SIGNATURE_H_
#define INFERD_BACKENDS_ONNX_ONNX_SIGNATURE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/config/model_config.h"
#include "core/types/data_type.h"

namespace inferd {

// One graph input or output as the session reports it.
struct GraphTensor {
  std::string name;
  std::optional<DataType> type;  // nullopt: a type the protocol cannot carry
  std::string type_name;         // ONNX's name for the element type, for messages
  std::vector<int64_t> dims;     // -1 for a symbolic or unknown dimension
};

struct GraphSignature {
  std::vector<GraphTensor> inputs;
  std::vector<GraphTensor> outputs;
};

// OK when every config input and output exists in the graph under the same name, with the
// same datatype and rank, fixed dimensions agreeing, and (for a batching model) a dynamic
// first dimension. Errors name config.yaml's field and what to change.
absl::Status CheckGraphSignature(const ModelConfig& config, const GraphSignature& graph,
                                 const std::string& config_path);

// max_batch_size of a config completed from a graph whose inputs and outputs all have a
// dynamic first dimension, when neither config.yaml nor BATCH_SIZE gave one (Triton uses 4;
// the default batching forms batches of up to this many rows from what has queued).
inline constexpr int kCompletedMaxBatchSize = 32;

// `config` with what config.yaml left out taken from the graph: every input (when it lists
// none) and every output (when it lists none) with the graph's names, datatypes and dims.
// The first dimension is the batch axis when max_batch_size > 0, and, when it is 0 and the
// config lists no tensors, when it is dynamic in every graph input and output
// (max_batch_size is then kCompletedMaxBatchSize, with auto-tuned dynamic batching).
// Errors name config.yaml and what to add or change.
absl::StatusOr<ModelConfig> CompleteConfigFromGraph(const ModelConfig& config,
                                                    const GraphSignature& graph,
                                                    const std::string& config_path);

}  // namespace inferd

#endif  // INFERD_BACKENDS_ONNX_ONNX_SIGNATURE_H_
