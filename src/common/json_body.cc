#include "common/json_body.h"

#include <algorithm>

#include "common/strings.h"

namespace inferd {

absl::StatusOr<ParsedJson> ParseJsonBody(std::string& body, size_t max_bytes) {
  if (body.empty()) return absl::InvalidArgumentError("the request body is empty; send JSON");
  if (body.size() > max_bytes) {
    return absl::InvalidArgumentError(
        StrCat("the JSON body is ", body.size(), " bytes, over the limit of ", max_bytes,
               " bytes for JSON; send large tensors with the binary tensor extension "
               "(Inference-Header-Content-Length) or in smaller requests"));
  }
  ParsedJson parsed;
  thread_local std::unique_ptr<simdjson::dom::parser> reused;
  simdjson::dom::parser* parser = nullptr;
  if (body.size() > kReusedParserBytes) {
    parsed.own_parser_ = std::make_unique<simdjson::dom::parser>(max_bytes);
    parser = parsed.own_parser_.get();
  } else {
    if (reused == nullptr) reused = std::make_unique<simdjson::dom::parser>(kReusedParserBytes);
    parser = reused.get();
  }
  // The depth limit is set at allocation; later automatic growth keeps it.
  if (parser->capacity() < body.size() || parser->max_depth() != kMaxJsonDepth) {
    if (parser->allocate(std::max<size_t>(body.size(), 4096), kMaxJsonDepth)) {
      return absl::ResourceExhaustedError(
          StrCat("cannot allocate parser memory for a ", body.size(), "-byte JSON body"));
    }
  }
  body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  const simdjson::error_code error =
      parser->parse(body.data(), body.size(), /*realloc_if_needed=*/false).get(parsed.root_);
  if (error == simdjson::NUMBER_ERROR) {
    // simdjson 3.0 reports integers beyond 64 bits this way, as well as malformed numbers.
    return absl::InvalidArgumentError(
        "the request body has a number that is malformed or an integer too large for 64 bits, "
        "out of range for every integer datatype (for a float input, write a large number "
        "with an exponent, e.g. 1.2e23)");
  }
  if (error == simdjson::DEPTH_ERROR) {
    return absl::InvalidArgumentError(
        StrCat("the request body nests arrays and objects deeper "
               "than ",
               kMaxJsonDepth, " levels; flatten it"));
  }
  if (error) {
    return absl::InvalidArgumentError(
        StrCat("the request body is not valid JSON: ", simdjson::error_message(error)));
  }
  return parsed;
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
