#include "observability/request_id.h"

#include <algorithm>
#include <cstdint>
#include <random>

namespace inferd {

std::string NewRequestId() {
  // One generator per thread: no lock on the request path, and ids from different threads
  // do not collide because each generator is seeded from the OS.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  for (int half = 0; half < 2; ++half) {
    uint64_t bits = generator();
    for (int i = 0; i < 16; ++i, bits >>= 4) id[half * 16 + i] = kHex[bits & 0xf];
  }
  return id;
}

std::string RequestIdFrom(std::string_view from_client) {
  const bool usable = !from_client.empty() && from_client.size() <= kMaxRequestIdLength &&
                      std::all_of(from_client.begin(), from_client.end(), [](char c) {
                        return c > ' ' && c < 0x7f && c != '"' && c != '\\';
                      });
  return usable ? std::string(from_client) : NewRequestId();
}

}  // namespace inferd
