// POST /v2/models/M/infer with a JSON body (KServe v2), through the router to a real model.
// Input: the model name, '\n', the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/strings.h"
#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  const auto [model, body] =
      inferd::fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  const std::string path = inferd::StrCat("/v2/models/", model, "/infer");
  server.Call(inferd::HttpMethod::kPost, path, "", {}, std::string(body));
  server.Restore();
  return 0;
}
