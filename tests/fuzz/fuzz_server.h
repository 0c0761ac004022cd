// A real router over a real ModelManager, for the fuzz targets that reach the HTTP handlers:
// the models use an echo backend (no engine), so a fuzzed request runs the same decode,
// validation, scheduling, batching and encoding code as in inferd, minus the socket.
//
// The repository (written to a temp folder at first use, removed at exit):
//   fp32    batched (max 8, dynamic batching), x: FP32 [-1] -> y
//   text    batched (max 8), t: BYTES [1] -> u
//   multi   unbatched, a: INT64 [-1,3], b: FP16 [2], c: BOOL [-1], d: UINT8 [-1] -> same
//   canary  versions 1 and 2 served (version_policy: all), x: INT32 [2] -> y
//   digits  the demo digits' signature (batched, pixels: FP32 [64]), for its sample.json
// The echo model reads every byte of every input (so a view past its buffer trips ASan) and
// returns the inputs as the outputs.
//
// Thread-safety: Call is made from the fuzzer's one thread; replies come from the scheduler
// threads and are waited for.
#ifndef INFERD_TESTS_FUZZ_FUZZ_SERVER_H_
#define INFERD_TESTS_FUZZ_FUZZ_SERVER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/repository/model_manager.h"
#include "core/service/inference_path.h"
#include "frontends/http/http_types.h"
#include "frontends/http/routing/router.h"
#include "shm/shared_memory_registry.h"

namespace inferd::fuzz {

class FuzzServer {
 public:
  // The process-wide server, created on first use.
  static FuzzServer& Get();

  // Dispatches one request and returns its reply. Aborts (a finding) when no reply comes
  // within 10 s, when a reply comes twice, or when an error reply is not {"error": ...}.
  HttpReply Call(HttpMethod method, std::string_view path, std::string_view query,
                 std::vector<std::pair<std::string_view, std::string_view>> headers,
                 std::string body);

  // Undoes what a request may have changed, so every input starts from the same state (a
  // finding must reproduce from its input alone): clears the canary's traffic rules, loads
  // again every model that is not ready, unregisters shared memory, and turns logging back
  // off.
  void Restore();

  ModelManager& models() { return *models_; }
  InferencePath& inference() { return *inference_; }

 private:
  FuzzServer();

  std::string repository_;
  std::unique_ptr<ModelManager> models_;
  // What every frontend submits through (main.cc builds the same one).
  std::unique_ptr<InferencePath> inference_;
  // Shared-memory regions a fuzz input registers (Restore unregisters them).
  SharedMemoryRegistry shared_memory_{SharedMemoryLimits{.max_regions = 8}};
  std::unique_ptr<HttpRouter> router_;
};

// Splits `data` at its first '\n': (first line, the rest). Without a '\n' all is the line.
std::pair<std::string_view, std::string_view> SplitFirstLine(std::string_view data);

// Quiets spdlog (a fuzzer runs millions of requests; their log lines are noise and time).
void SilenceLogs();

}  // namespace inferd::fuzz

#endif  // INFERD_TESTS_FUZZ_FUZZ_SERVER_H_
