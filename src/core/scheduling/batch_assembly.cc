#include "core/scheduling/batch_assembly.h"

#include <cstring>
#include <utility>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {

absl::StatusOr<Tensor> ConcatenateTensors(std::span<const Tensor* const> parts, Shape shape) {
  if (parts.empty()) return absl::InvalidArgumentError("nothing to concatenate");
  const DataType type = parts.front()->type();
  size_t bytes = 0;
  for (const Tensor* part : parts) {
    if (part->type() != type) {
      return absl::InvalidArgumentError(StrCat("cannot join a ", DataTypeName(part->type()),
                                               " tensor to a ", DataTypeName(type), " one"));
    }
    bytes += part->byte_size();
  }
  ASSIGN_OR_RETURN(Tensor merged, Tensor::AllocateForOverwrite(type, std::move(shape), bytes));
  std::byte* out = merged.mutable_data();
  for (const Tensor* part : parts) {
    if (part->byte_size() == 0) continue;
    std::memcpy(out, part->data(), part->byte_size());
    out += part->byte_size();
  }
  return merged;
}

absl::StatusOr<std::vector<Tensor>> GatherInputs(const std::vector<PendingRequest>& batch) {
  const InferRequest& first = *batch.front().request;
  std::vector<Tensor> inputs;
  inputs.reserve(first.inputs.size());
  if (batch.size() == 1) {
    for (const NamedTensor& input : first.inputs) inputs.push_back(input.tensor);
    return inputs;
  }
  int64_t total_rows = 0;
  for (const PendingRequest& pending : batch) total_rows += pending.rows;
  std::vector<const Tensor*> parts(batch.size());
  for (size_t i = 0; i < first.inputs.size(); ++i) {
    Shape shape = first.inputs[i].tensor.shape();
    shape[0] = total_rows;
    for (size_t r = 0; r < batch.size(); ++r) parts[r] = &batch[r].request->inputs[i].tensor;
    ASSIGN_OR_RETURN(Tensor merged, ConcatenateTensors(parts, std::move(shape)));
    inputs.push_back(std::move(merged));
  }
  return inputs;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> ScatterOutputs(
    const std::vector<Tensor>& outputs, const std::vector<PendingRequest>& batch) {
  std::vector<std::vector<Tensor>> per_request(batch.size());
  if (batch.size() == 1) {
    per_request[0] = outputs;
    return per_request;
  }
  int64_t total_rows = 0;
  for (const PendingRequest& pending : batch) total_rows += pending.rows;
  for (const Tensor& output : outputs) {
    if (output.shape().empty() || output.shape()[0] != total_rows) {
      return absl::InternalError(StrCat("the model returned an output of shape ",
                                        ShapeToString(output.shape()), " for a batch of ",
                                        total_rows, " rows; it cannot be split per request"));
    }
    const size_t row_bytes = output.byte_size() / static_cast<size_t>(total_rows);
    size_t offset = 0;
    for (size_t r = 0; r < batch.size(); ++r) {
      Shape shape = output.shape();
      shape[0] = batch[r].rows;
      const size_t bytes = row_bytes * static_cast<size_t>(batch[r].rows);
      // A view into the shared output; const_cast because Wrap takes a writable pointer.
      per_request[r].push_back(Tensor::Wrap(output.type(), std::move(shape),
                                            const_cast<std::byte*>(output.data()) + offset, bytes,
                                            output.owner()));
      offset += bytes;
    }
  }
  return per_request;
}

}  // namespace inferd
