#include "frontends/http/json_body.h"

#include "common/strings.h"

namespace inferd {

absl::StatusOr<simdjson::dom::element> ParseJsonBody(std::string& body) {
  thread_local simdjson::dom::parser parser;
  if (body.empty()) return absl::InvalidArgumentError("the request body is empty; send JSON");
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  simdjson::dom::element root;
  const simdjson::error_code error =
      parser.parse(body.data(), body.size(), /*realloc_if_needed=*/false).get(root);
  if (error == simdjson::NUMBER_ERROR) {
    // simdjson 3.0 reports integers beyond 64 bits this way, as well as malformed numbers.
    return absl::InvalidArgumentError(
        "the request body has a number that is malformed or an integer too large for 64 bits, "
        "out of range for every integer datatype (for a float input, write a large number "
        "with an exponent, e.g. 1.2e23)");
  }
  if (error) {
    return absl::InvalidArgumentError(
        StrCat("the request body is not valid JSON: ", simdjson::error_message(error)));
  }
  return root;
}

absl::StatusOr<simdjson::dom::array> GetArray(simdjson::dom::object object, std::string_view key,
                                              std::string_view where) {
  simdjson::dom::element value;
  if (object[key].get(value)) {
    return absl::InvalidArgumentError(StrCat(where, ": '", key, "' is required"));
  }
  simdjson::dom::array array;
  if (value.get(array)) {
    return absl::InvalidArgumentError(StrCat(where, ": '", key, "' must be an array"));
  }
  return array;
}

absl::StatusOr<std::string_view> GetString(simdjson::dom::object object, std::string_view key,
                                           std::string_view where) {
  simdjson::dom::element value;
  if (object[key].get(value)) {
    return absl::InvalidArgumentError(StrCat(where, ": '", key, "' is required"));
  }
  std::string_view text;
  if (value.get(text)) {
    return absl::InvalidArgumentError(StrCat(where, ": '", key, "' must be a string"));
  }
  return text;
}

}  // namespace inferd
