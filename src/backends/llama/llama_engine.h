// One loaded GGUF model and its decode loop: continuous batching over `parallel` sequences.
//
// One thread per model owns the llama.cpp context. Each step it admits queued requests into
// free sequence slots (reusing the longest cached prefix of their prompt), then makes one
// engine call holding the next token of every generating sequence plus chunks of pending
// prompts up to batch_size tokens, samples each sequence's next token with its own sampler
// chain, and reports the new text. Sequences join and leave between steps; a cancelled or
// expired request leaves at the next step and its slot is free again.
//
// Requests are tokenized (and chat messages rendered) on the caller's thread, so a prompt
// that does not fit is refused at once and the decode thread only decodes.
//
// Thread-safety: Generate, ApplyChatTemplate and Stats are thread-safe. Ownership: the engine
// owns queued and running requests and answers each exactly once; Shutdown (or the
// destructor) answers the rest with Unavailable.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "backends/llama/chat_template.h"
#include "backends/llama/llama_options.h"
#include "common/mutex.h"
#include "core/generation.h"

struct llama_model;
struct llama_context;
struct llama_vocab;

namespace inferd {

class LlamaEngine : public GenerativeModel {
 public:
  // Loads `gguf` and creates the context and its KV cache. Errors name the file.
  static absl::StatusOr<std::unique_ptr<LlamaEngine>> Create(const std::filesystem::path& gguf,
                                                             const LlamaOptions& options);
  ~LlamaEngine() override;

  void Generate(std::unique_ptr<GenerateRequest> request) override;
  absl::StatusOr<std::string> ApplyChatTemplate(
      const std::vector<ChatMessage>& messages) const override;
  GenerationStats Stats() const override;
  void Shutdown() override;

  // Weights plus the KV cache, what the memory budget counts.
  uint64_t memory_bytes() const { return weight_bytes_ + kv_bytes_; }
  uint64_t kv_bytes() const { return kv_bytes_; }

 private:
  struct Queued;
  struct Slot;

  LlamaEngine(llama_model* model, llama_context* context, const LlamaOptions& options);

  void Loop();
  // One step; false when there was nothing to do.
  bool Step();
  // Moves queued requests into free slots; drops cancelled and expired ones.
  void Admit();
  void Finish(Slot& slot, absl::Status status, FinishReason reason);
  // Tokens of `text` as the engine sees a prompt (special tokens parsed, BOS added when the
  // vocabulary wants it).
  std::vector<int32_t> Tokenize(const std::string& text) const;
  std::string Piece(int32_t token) const;

  llama_model* const model_;
  llama_context* const context_;
  const llama_vocab* const vocab_;
  const LlamaOptions options_;
  std::unique_ptr<ChatTemplate> template_;  // null: the file has none
  absl::Status template_status_;            // why there is none
  uint64_t weight_bytes_ = 0;
  uint64_t kv_bytes_ = 0;

  mutable Mutex mu_;
  CondVar work_;
  std::deque<std::unique_ptr<Queued>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  GenerationStats stats_ ABSL_GUARDED_BY(mu_);

  // Decode thread only.
  std::vector<std::unique_ptr<Slot>> slots_;
  uint64_t tick_ = 0;
  std::thread thread_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_ENGINE_H_
