// backend: pipeline. A version folder holds no model file, only the assets its ops name
// (labels.txt, tokenizer.json); loading one compiles the pipeline's graph against the op
// registry and the repository's configs (backends/pipeline/pipeline_compiler.h).
//
// Thread-safety: Load may run on the loader thread while requests run; the registry is
// read-only after start-up.
#ifndef INFERD_BACKENDS_PIPELINE_PIPELINE_BACKEND_H_
#define INFERD_BACKENDS_PIPELINE_PIPELINE_BACKEND_H_

#include <memory>

#include "backends/pipeline/pipeline_host.h"
#include "core/backend/backend.h"
#include "core/pipeline/op_registry.h"

namespace inferd {

class PipelineBackend : public Backend {
 public:
  // `ops` and `host` must outlive the backend and every model it loads.
  PipelineBackend(const OpRegistry* ops, PipelineHost* host) : ops_(ops), host_(host) {}

  std::string_view name() const override { return "pipeline"; }
  // What Triton's clients expect of a model made of other models.
  std::string_view platform() const override { return "ensemble"; }
  std::string_view model_filename() const override { return ""; }
  bool has_model_file() const override { return false; }

  absl::StatusOr<std::unique_ptr<BackendModel>> Load(const BackendLoadRequest& request) override;

 private:
  const OpRegistry* const ops_;
  PipelineHost* const host_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_PIPELINE_PIPELINE_BACKEND_H_
