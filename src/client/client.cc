#include "client/client.h"

#include <utility>

namespace inferd {

const Tensor* InferResult::Output(std::string_view name) const {
  for (const NamedTensor& output : outputs) {
    if (output.name == name) return &output.tensor;
  }
  return nullptr;
}

std::future<absl::StatusOr<InferResult>> Client::InferFuture(InferOptions options,
                                                             std::vector<NamedTensor> inputs) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<InferResult>>>();
  std::future<absl::StatusOr<InferResult>> future = promise->get_future();
  InferAsync(std::move(options), std::move(inputs), [promise](absl::StatusOr<InferResult> result) {
    promise->set_value(std::move(result));
  });
  return future;
}

}  // namespace inferd
