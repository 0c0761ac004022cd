// Turning several requests into one engine call and back: inputs are concatenated along the
// batch dimension, outputs split along it into views that share the engine's output buffer.
#ifndef INFERD_CORE_SCHEDULING_BATCH_ASSEMBLY_H_
#define INFERD_CORE_SCHEDULING_BATCH_ASSEMBLY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "core/scheduling/pending_request.h"
#include "core/types/tensor.h"

namespace inferd {

// `parts` (one datatype) back to back in one new tensor of `shape`, sized by the parts'
// bytes: a BYTES tensor's size depends on its strings, not on its shape. The one way rows
// are joined, by the batcher and by frontends that stack a request's instances.
absl::StatusOr<Tensor> ConcatenateTensors(std::span<const Tensor* const> parts, Shape shape);

// One tensor per input. A single request's tensors are used as they are (no copy).
absl::StatusOr<std::vector<Tensor>> GatherInputs(const std::vector<PendingRequest>& batch);

// For each request, its rows of every output. Fails when an output's first dimension is not
// the batch's total row count.
absl::StatusOr<std::vector<std::vector<Tensor>>> ScatterOutputs(
    const std::vector<Tensor>& outputs, const std::vector<PendingRequest>& batch);

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_BATCH_ASSEMBLY_H_
