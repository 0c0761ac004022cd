// The repository extension: POST /v2/repository/models/M/load|unload, GET|POST .../traffic
// (with its {"labels", "traffic"} body) and POST /v2/repository/index.
// Input: "<op> <model>" (op: load, unload, traffic, get-traffic, index), '\n', the body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/strings.h"
#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  const auto [line, body] =
      inferd::fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  const size_t space = line.find(' ');
  const std::string_view op = line.substr(0, space);
  const std::string_view model = space == std::string_view::npos ? "" : line.substr(space + 1);
  inferd::HttpMethod method = inferd::HttpMethod::kPost;
  std::string path;
  if (op == "index") {
    path = "/v2/repository/index";
  } else if (op == "load" || op == "unload" || op == "traffic" || op == "get-traffic") {
    if (op == "get-traffic") method = inferd::HttpMethod::kGet;
    path = inferd::StrCat("/v2/repository/models/", model, "/",
                          op == "get-traffic" ? std::string_view("traffic") : op);
  } else {
    return -1;  // not an operation: keep it out of the corpus
  }
  server.Call(method, path, "", {}, std::string(body));
  server.Restore();
  return 0;
}
