// llama.cpp's process-wide set-up and its log: warnings and errors reach our log, and a
// thread may collect the errors llama.cpp reports while it makes one call (a grammar that
// does not parse says why only there).
//
// Thread-safety: InitLlamaOnce may run on any thread, as often as wanted. A LlamaErrorCapture
// collects only its own thread's messages; at most one lives per thread at a time.
#ifndef INFERD_BACKENDS_LLAMA_LLAMA_LOG_H_
#define INFERD_BACKENDS_LLAMA_LLAMA_LOG_H_

#include <string>
#include <string_view>

namespace inferd {

// Sets llama.cpp's log callback and initialises its backends, once per process.
void InitLlamaOnce();

// While it lives, llama.cpp's error messages on this thread are kept (and still logged).
class LlamaErrorCapture {
 public:
  LlamaErrorCapture();
  ~LlamaErrorCapture();
  LlamaErrorCapture(const LlamaErrorCapture&) = delete;
  LlamaErrorCapture& operator=(const LlamaErrorCapture&) = delete;

  // The messages so far, joined with "; " (empty: none); at most about 1 KiB of them.
  const std::string& errors() const { return errors_; }
  void Add(std::string_view message);

 private:
  std::string errors_;
};

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_LLAMA_LOG_H_
