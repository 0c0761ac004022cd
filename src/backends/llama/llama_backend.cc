#include "backends/llama/llama_backend.h"

#include <future>
#include <utility>
#include <vector>

#include <llama.h>

#include "backends/llama/llama_engine.h"
#include "backends/llama/llama_options.h"
#include "common/openmp_team.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/bytes_tensor.h"

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
  GenerationStats Stats() const override { return engine_->Stats(); }
  void Embed(std::unique_ptr<EmbedRequest> request) override { engine_->Embed(std::move(request)); }
  void Shutdown() override { engine_->Shutdown(); }

  // text_input (BYTES, one element) -> text_output: one generation with default sampling,
  // waited for on the calling execution thread.
  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    if (inputs.size() != 1 || inputs[0].type() != DataType::kBytes) {
      return absl::InvalidArgumentError("a llama model takes one BYTES input (the prompt)");
    }
    const std::vector<std::string_view> prompts = BytesElements(inputs[0]);
    if (prompts.size() != 1) {
      return absl::InvalidArgumentError(StrCat("text_input must hold one prompt, got ",
                                               prompts.size(), " (send one request each)"));
    }
    auto request = std::make_unique<GenerateRequest>();
    request->prompt = std::string(prompts[0]);
    auto text = std::make_shared<std::string>();
    auto done = std::make_shared<std::promise<absl::Status>>();
    std::future<absl::Status> finished = done->get_future();
    request->on_event = [text, done](GenerationEvent event) {
      text->append(event.text);
      if (event.done) done->set_value(event.status);
    };
    engine_->Generate(std::move(request));
    RETURN_IF_ERROR(finished.get());
    const std::string_view output(*text);
    ASSIGN_OR_RETURN(Tensor tensor, MakeBytesTensor(Shape{1}, std::span(&output, 1)));
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(tensor));
    return outputs;
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
  ASSIGN_OR_RETURN(std::unique_ptr<LlamaEngine> engine,
                   LlamaEngine::Create(request.version_dir / "model.gguf", options));
  return std::unique_ptr<BackendModel>(new LlamaModel(std::move(engine)));
}

std::string LlamaBackend::Describe() const {
  return StrCat("llama.cpp (", llama_print_system_info(), ")");
}

}  // namespace inferd
