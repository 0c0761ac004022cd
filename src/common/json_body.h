// The one way a request body becomes JSON: simdjson, in place and without copying the body,
// with a depth and a size limit. Every JSON a client sends (the HTTP bodies of KServe,
// TF-Serving, /predict, logging, traffic and generation; gRPC's sampling_parameters) goes
// through ParseJsonBody, so none reaches a parser that recurses without bound or keeps a huge
// buffer alive.
#ifndef INFERD_COMMON_JSON_BODY_H_
#define INFERD_COMMON_JSON_BODY_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "absl/status/statusor.h"

namespace inferd {

// Nesting deeper than this is refused: a tensor of rank 60 in a KServe body nests 63 deep,
// and the decoders that walk nested lists recurse once per level.
inline constexpr size_t kMaxJsonDepth = 64;
// Larger JSON bodies are refused (binary tensors may be larger; --max-request-bytes bounds
// the whole body). simdjson needs ~10 bytes of parser memory per body byte.
inline constexpr size_t kMaxJsonBytes = 64u << 20;
// Bodies above this get a parser of their own, freed with the ParsedJson, instead of
// growing the I/O thread's reused parser for good.
inline constexpr size_t kReusedParserBytes = 1u << 20;

// A parsed body. The root stays valid while this object lives, the body string is
// unchanged, and (for bodies up to kReusedParserBytes) until the next ParseJsonBody call on
// the same thread: each I/O thread reuses one parser so the hot path does not allocate.
class ParsedJson {
 public:
  simdjson::dom::element root() const { return root_; }

 private:
  friend absl::StatusOr<ParsedJson> ParseJsonBody(std::string& body, size_t max_bytes);
  std::unique_ptr<simdjson::dom::parser> own_parser_;
  simdjson::dom::element root_;
};

// Parses `body` (padding it in place as simdjson requires). InvalidArgument, with a message
// a person can act on, for an empty, malformed, too deep or too large body.
absl::StatusOr<ParsedJson> ParseJsonBody(std::string& body, size_t max_bytes = kMaxJsonBytes);

// Field access with errors a person can act on ("'inputs' must be an array").
absl::StatusOr<simdjson::dom::array> GetArray(simdjson::dom::object object, std::string_view key,
                                              std::string_view where);
absl::StatusOr<std::string_view> GetString(simdjson::dom::object object, std::string_view key,
                                           std::string_view where);

}  // namespace inferd

#endif  // INFERD_COMMON_JSON_BODY_H_
