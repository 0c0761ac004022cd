// A built-in pipeline operation (tokenize, image_to_tensor, softmax, top_k, ...): the
// contract between the pipeline runtime (core/pipeline, backends/pipeline) and the op
// libraries (ops/text, ops/image, ops/post). Core never includes an op library's header:
// main registers each library's factories in an OpRegistry, and a pipeline's config names
// them by `op:`.
#ifndef INFERD_CORE_PIPELINE_PIPELINE_OP_H_
#define INFERD_CORE_PIPELINE_PIPELINE_OP_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/model_config.h"
#include "core/types/tensor.h"

namespace inferd {

// One op instance of one loaded pipeline version. Immutable after its factory returns; Run
// is const and may be called from several threads at once.
class PipelineOp {
 public:
  virtual ~PipelineOp() = default;

  // The op's ports, by name. Dims exclude the batch dimension; -1 is variable. Fixed after
  // load (the params decide them, e.g. tokenize's max_length), so the runtime can check the
  // steps a pipeline chains against each other before the first request.
  virtual const std::vector<TensorSpec>& inputs() const = 0;
  virtual const std::vector<TensorSpec>& outputs() const = 0;

  // True for work that takes more than ~50 us a row (decoding, tokenizing): the runtime runs
  // it on the pipeline's own threads, never on an I/O thread or a step model's thread.
  virtual bool heavy() const = 0;

  // `inputs` holds one tensor per inputs() port, in order, each [B, ...] (B >= 1 rows).
  // Returns one tensor per outputs() port, in order, each [B, ...]. A row the op cannot take
  // is InvalidArgument naming the row and what to send instead ("element 3: not UTF-8 (byte
  // 17)"); the runtime prefixes the pipeline input it came from. Any other code is the
  // server's fault.
  virtual absl::StatusOr<std::vector<Tensor>> Run(std::span<const Tensor> inputs) const = 0;

  // Shape rules the load-time check applies between steps. By default every input port's
  // dims must match its producer's (-1 matching anything) and the output ports' dims are as
  // declared. accepts_any_dims: the input ports' dims are not checked, only their datatype
  // (reshape, element-wise ops). preserves_dims: every output port has input 0's dims, so the
  // check carries the producer's dims on (softmax over [10] gives [10] to top_k, whose labels
  // count is then checked against 10).
  virtual bool accepts_any_dims() const { return false; }
  virtual bool preserves_dims() const { return false; }

  // Bytes the op holds (a vocabulary, a labels table), counted in the pipeline's memory.
  virtual uint64_t memory_bytes() const { return 0; }
};

struct OpLoadRequest {
  // Prefix for errors: "models/p/config.yaml: pipeline.steps[0]"; an op's errors read
  // "<field>.params.max_pixels: must be ...". FieldReader(field) followed by
  // reader.Error("params.max_pixels", ...) gives exactly that.
  std::string field;
  // The step's `params:` mapping as YAML text (empty when absent): a YAML::Node must not be
  // shared across threads, and each factory parses its own.
  std::string params_yaml;
  // <repository>/<pipeline>/<version>: assets (tokenizer.json, labels.txt) are relative to it;
  // an op must refuse a path that leaves it.
  std::filesystem::path version_dir;
};

using OpFactory =
    std::function<absl::StatusOr<std::unique_ptr<PipelineOp>>(const OpLoadRequest& request)>;

}  // namespace inferd

#endif  // INFERD_CORE_PIPELINE_PIPELINE_OP_H_
