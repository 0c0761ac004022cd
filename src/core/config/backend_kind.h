// The few ways a config.yaml's meaning depends on its backend, known before any backend code
// runs: a request is checked against the config before its model is loaded, so the config
// alone must say which tensors a language model has, that it generates text, that it may
// take LoRA adapters, and that a pipeline has steps instead of an engine. This is the one
// place in the core that names backends; everything else reads the kind, or the
// capabilities it sets (ModelConfig::capabilities). The engines themselves register under
// the same names (Backend::name()); an unknown name is a tensor model here and is refused
// when no backend of that name is registered (core/repository).
#ifndef INFERD_CORE_CONFIG_BACKEND_KIND_H_
#define INFERD_CORE_CONFIG_BACKEND_KIND_H_

#include <string_view>

namespace inferd {

enum class BackendKind {
  kTensor,         // tensors in, tensors out (torch, onnx)
  kLanguageModel,  // text in, text out, embeddings, rerank (llama)
  kPipeline,       // steps that call other models (pipeline)
};

BackendKind BackendKindOf(std::string_view backend);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_BACKEND_KIND_H_
