// The llama.cpp backend: serves GGUF language models (`model.gguf`) that generate text, with
// continuous batching (LlamaEngine). Only this folder includes llama.cpp headers.
//
// A loaded model is a BackendModel whose generative() is its engine; Execute also answers the
// classic infer protocols (KServe v2, gRPC ModelInfer) for the declared text_input ->
// text_output tensors, one whole generation per request.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_BACKEND_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>

#include "core/backend/backend.h"

namespace inferd {

class LlamaBackend : public Backend {
 public:
  std::string_view name() const override { return "llama"; }
  std::string_view platform() const override { return "llama_cpp_gguf"; }
  std::string_view model_filename() const override { return "model.gguf"; }

  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override;

  // The llama.cpp build, for the startup summary.
  std::string Describe() const;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_BACKEND_H_
