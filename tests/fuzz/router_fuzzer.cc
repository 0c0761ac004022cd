// Any HTTP request through the router: method, path, query, headers and body.
// Input: "METHOD /path[?query]" line, "Name: value" header lines, an empty line, the body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& server = inferd::fuzz::FuzzServer::Get();
  auto [line, rest] = inferd::fuzz::SplitFirstLine({reinterpret_cast<const char*>(data), size});
  const size_t space = line.find(' ');
  const std::string_view verb = line.substr(0, space);
  std::string_view target = space == std::string_view::npos ? "" : line.substr(space + 1);
  inferd::HttpMethod method = inferd::HttpMethod::kOther;
  if (verb == "GET") method = inferd::HttpMethod::kGet;
  if (verb == "HEAD") method = inferd::HttpMethod::kHead;
  if (verb == "POST") method = inferd::HttpMethod::kPost;
  std::string_view query;
  if (const size_t q = target.find('?'); q != std::string_view::npos) {
    query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  while (!rest.empty()) {
    auto [header, after] = inferd::fuzz::SplitFirstLine(rest);
    rest = after;
    if (header.empty()) break;
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = header.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    headers.emplace_back(header.substr(0, colon), value);
  }
  server.Call(method, target, query, std::move(headers), std::string(rest));
  server.Restore();
  return 0;
}
