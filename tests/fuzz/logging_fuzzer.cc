// POST /v2/logging: the log settings body. Input: the body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  server.Call(inferd::HttpMethod::kPost, "/v2/logging", "", {},
              std::string(reinterpret_cast<const char*>(data), size));
  server.Restore();
  return 0;
}
