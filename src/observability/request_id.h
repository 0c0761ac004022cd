// Request ids: the one a client sent in X-Request-ID when it is usable, else a fresh one, so
// that a request can be followed from the client through the access log and back.
#ifndef INFERD_OBSERVABILITY_REQUEST_ID_H_
#define INFERD_OBSERVABILITY_REQUEST_ID_H_

#include <string>
#include <string_view>

namespace inferd {

inline constexpr std::string_view kRequestIdHeader = "X-Request-ID";
inline constexpr size_t kMaxRequestIdLength = 128;

// `from_client` when it is 1..128 printable ASCII characters without spaces or quotes (it
// goes into log lines and headers as is); otherwise a new random 32-hex-digit id.
std::string RequestIdFrom(std::string_view from_client);
std::string NewRequestId();

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_REQUEST_ID_H_
