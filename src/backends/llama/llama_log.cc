#include "backends/llama/llama_log.h"

#include <mutex>
#include <string_view>

#include <llama.h>
#include <spdlog/spdlog.h>

namespace inferd {

namespace {

// The capture of the calling thread, if any.
thread_local LlamaErrorCapture* current_capture = nullptr;

// llama.cpp logs every tensor at load to stderr; only its warnings and errors reach our log.
void ForwardLlamaLog(ggml_log_level level, const char* text, void*) {
  std::string_view message(text);
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  if (message.empty()) return;
  if (level == GGML_LOG_LEVEL_ERROR) {
    spdlog::error("llama.cpp: {}", message);
    if (current_capture != nullptr) current_capture->Add(message);
  } else if (level == GGML_LOG_LEVEL_WARN) {
    spdlog::warn("llama.cpp: {}", message);
  }
}

}  // namespace

void InitLlamaOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llama_log_set(ForwardLlamaLog, nullptr);
    llama_backend_init();
  });
}

LlamaErrorCapture::LlamaErrorCapture() { current_capture = this; }

LlamaErrorCapture::~LlamaErrorCapture() { current_capture = nullptr; }

void LlamaErrorCapture::Add(std::string_view message) {
  // A hostile grammar could make llama.cpp report many errors; a client needs the first few.
  constexpr size_t kMaxBytes = 1024;
  if (errors_.size() >= kMaxBytes) return;
  if (!errors_.empty()) errors_ += "; ";
  errors_ += message.substr(0, kMaxBytes - errors_.size());
}

}  // namespace inferd
