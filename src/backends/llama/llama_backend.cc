#include "backends/llama/llama_backend.h"

#include <utility>
#include <vector>

#include <llama.h>

#include "backends/llama/llama_engine.h"
#include "backends/llama/llama_options.h"
#include "common/openmp_team.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// A BackendModel that is also a GenerativeModel (ServedModel finds it so): the engine's
// methods, and Execute for the classic protocols.
class LlamaModel : public BackendModel, public GenerativeModel {
 public:
  explicit LlamaModel(std::unique_ptr<LlamaEngine> engine) : engine_(std::move(engine)) {}

  void Generate(std::unique_ptr<GenerateRequest> request) override {
    engine_->Generate(std::move(request));
  }
  absl::StatusOr<std::string> ApplyChatTemplate(
      const std::vector<ChatMessage>& messages) const override {
    return engine_->ApplyChatTemplate(messages);
  }
  absl::StatusOr<std::string> RenderChatPrompt(const GenerateRequest& request) const override {
    return engine_->RenderChatPrompt(request);
  }
  GenerationStats Stats() const override { return engine_->Stats(); }
  void Embed(std::unique_ptr<EmbedRequest> request) override { engine_->Embed(std::move(request)); }
  void Rerank(std::unique_ptr<RerankRequest> request) override {
    engine_->Rerank(std::move(request));
  }
  void Shutdown() override { engine_->Shutdown(); }

  // Tensor requests to a generative model are served as generations by the inference path
  // (core/service/infer_as_generation.h), with the generation limits, deadline and cancellation;
  // none reaches an execution instance.
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor>) override {
    return absl::InternalError(
        "a llama model generates through the inference path, not an execution instance");
  }

  uint64_t memory_bytes() const override { return engine_->memory_bytes(); }
  // ggml's threads are the calling thread's OpenMP team (loading may have started one).
  void ReleaseCallerThreads() override { ReleaseOpenMpTeam(); }

 private:
  std::unique_ptr<LlamaEngine> engine_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<BackendModel>> LlamaBackend::Load(
    const BackendLoadRequest& request) {
  const std::string config_path = (request.version_dir.parent_path() / "config.yaml").string();
  ASSIGN_OR_RETURN(LlamaOptions options, ParseLlamaOptions(*request.config, config_path));
  RETURN_IF_ERROR(CheckGpuOffload(options, llama_supports_gpu_offload(), config_path));
  std::vector<LlamaAdapterFile> adapters;
  for (const AdapterConfig& adapter : request.config->adapters) {
    adapters.push_back({adapter.name, request.version_dir / adapter.path});
  }
  ASSIGN_OR_RETURN(std::unique_ptr<LlamaEngine> engine,
                   LlamaEngine::Create(request.version_dir / "model.gguf", options, adapters));
  return std::unique_ptr<BackendModel>(new LlamaModel(std::move(engine)));
}

std::string LlamaBackend::Describe() const {
  return StrCat("llama.cpp (", llama_print_system_info(), ")");
}

}  // namespace inferd
