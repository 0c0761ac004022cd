// Reading and bounding the fields of a JSON request body, for the codecs of every API that
// takes one (OpenAI's, Anthropic's, KServe's generate): one set of rules, so a number out
// of range or a stop list too long is refused the same way on every path. Each refusal is
// InvalidArgument naming the field (common/error_detail.h). An absent or null field leaves
// `out` alone.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_REQUEST_FIELDS_H_
#define INFERD_FRONTENDS_HTTP_CODECS_REQUEST_FIELDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "absl/status/status.h"

namespace inferd {

// InvalidArgument with `message`, naming `field`.
absl::Status InvalidField(std::string_view field, const std::string& message);

// A number in [min, max].
absl::Status ReadNumber(simdjson::dom::object o, std::string_view key, double min, double max,
                        double* out);
// An integer in [min, max]; `present` (when given) turns true when the field is there.
absl::Status ReadInteger(simdjson::dom::object o, std::string_view key, int64_t min, int64_t max,
                         int64_t* out, bool* present = nullptr);
absl::Status ReadBool(simdjson::dom::object o, std::string_view key, bool* out);
// A string or a list of strings, at most kMaxStopStrings of at most kMaxStopBytes each
// (core/backend/generation.h); empty strings are dropped.
absl::Status ReadStops(simdjson::dom::object o, std::string_view key,
                       std::vector<std::string>* out);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_REQUEST_FIELDS_H_
