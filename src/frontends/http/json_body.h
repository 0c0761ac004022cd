// Parsing a request body as JSON with simdjson, in place and without copying the body.
#ifndef INFERD_FRONTENDS_HTTP_JSON_BODY_H_
#define INFERD_FRONTENDS_HTTP_JSON_BODY_H_

#include <string>
#include <string_view>

#include <simdjson.h>

#include "absl/status/statusor.h"

namespace inferd {

// Parses `body` (padding it in place as simdjson requires). The element stays valid until the
// next ParseJsonBody call on the same thread: each I/O thread has its own parser, reused so
// the hot path does not allocate parser buffers per request.
absl::StatusOr<simdjson::dom::element> ParseJsonBody(std::string& body);

// Field access with errors a person can act on ("'inputs' must be an array").
absl::StatusOr<simdjson::dom::array> GetArray(simdjson::dom::object object, std::string_view key,
                                              std::string_view where);
absl::StatusOr<std::string_view> GetString(simdjson::dom::object object, std::string_view key,
                                           std::string_view where);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_JSON_BODY_H_
