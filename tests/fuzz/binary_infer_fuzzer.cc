// POST /v2/models/M/infer with the binary tensor extension: the Inference-Header-Content-Length
// split, then raw tensors (BYTES as 4-byte length + bytes) viewed in place.
// Input: the model name, '\n', the header's value, '\n', the body (JSON header + tensors).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/strings.h"
#include "frontends/http/codecs/infer_body.h"
#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  const auto [model, rest] =
      inferd::fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  const auto [length, body] = inferd::fuzz::SplitFirstLine(rest);
  const std::string path = inferd::StrCat("/v2/models/", model, "/infer");
  server.Call(
      inferd::HttpMethod::kPost, path, "",
      {{inferd::kInferenceHeaderLength, length}, {"Content-Type", "application/octet-stream"}},
      std::string(body));
  server.Restore();
  return 0;
}
