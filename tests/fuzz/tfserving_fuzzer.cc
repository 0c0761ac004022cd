// POST /v1/models/...:predict (TF-Serving REST, row and columnar formats).
// Input: the path after /v1/models/ (e.g. "fp32:predict", "canary/versions/2:predict"), '\n',
// the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/strings.h"
#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  const auto [target, body] =
      inferd::fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  const std::string path = inferd::StrCat("/v1/models/", target);
  server.Call(inferd::HttpMethod::kPost, path, "", {}, std::string(body));
  server.Restore();
  return 0;
}
