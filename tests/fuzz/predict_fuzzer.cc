// The seed's POST /predict[?model=M] with {"input": <nested list>}; also the query string.
// Input: the query string (e.g. "model=fp32"), '\n', the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  const auto [query, body] =
      inferd::fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  server.Call(inferd::HttpMethod::kPost, "/predict", query, {}, std::string(body));
  server.Restore();
  return 0;
}
