// Reads one parameter from a URL query string ("model=m&x=1").
#ifndef INFERD_FRONTENDS_HTTP_CODECS_QUERY_STRING_H_
#define INFERD_FRONTENDS_HTTP_CODECS_QUERY_STRING_H_

#include <optional>
#include <string_view>

namespace inferd {

// The value of `key`, undecoded (model names need no percent-encoding); nullopt if absent.
std::optional<std::string_view> QueryParameter(std::string_view query, std::string_view key);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_QUERY_STRING_H_
