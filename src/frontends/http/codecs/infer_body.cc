#include "frontends/http/codecs/infer_body.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "auth/tenant.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {

absl::StatusOr<DecodedInferBody> DecodeInferBody(const HttpRequestView& view,
                                                 const SharedMemoryRegistry* shared_memory) {
  DecodedInferBody decoded;
  std::optional<SharedMemoryScope> scope;
  if (shared_memory != nullptr) scope.emplace(*shared_memory, TenantOwner(view.tenant));
  InferBodyExtensions extensions{.shared_memory = scope ? &*scope : nullptr,
                                 .outputs = &decoded.outputs};
  const std::string_view header = view.Header(kInferenceHeaderLength);
  if (header.empty()) {
    ASSIGN_OR_RETURN(decoded.request, DecodeInferRequest(*view.body, extensions));
    return decoded;
  }
  uint64_t json_length = 0;
  auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), json_length);
  if (ec != std::errc() || end != header.data() + header.size()) {
    return absl::InvalidArgumentError(StrCat("header ", kInferenceHeaderLength, ": '", header,
                                             "' is not a non-negative integer"));
  }
  if (json_length > view.body->size()) {
    return absl::InvalidArgumentError(StrCat("header ", kInferenceHeaderLength, " is ", json_length,
                                             " but the body has only ", view.body->size(),
                                             " bytes"));
  }
  // The body's heap buffer moves with it, so the binary section stays where it was read.
  auto body = std::make_shared<std::string>(std::move(*view.body));
  std::string json = body->substr(0, json_length);
  BinaryTensorReader binary(body, json_length);
  extensions.binary = &binary;
  ASSIGN_OR_RETURN(decoded.request, DecodeInferRequest(json, extensions));
  RETURN_IF_ERROR(binary.CheckFullyRead());
  return decoded;
}

HttpReply EncodeInferReply(std::string_view model_name, int64_t version, std::string_view id,
                           const InferResponse& response, const OutputDestinations& destinations) {
  if (!destinations.shared_memory.empty()) {
    if (absl::Status written = destinations.shared_memory.WriteAll(response); !written.ok()) {
      return ErrorReply(written);
    }
  }
  std::string binary;
  HttpReply reply{200,
                  EncodeInferResponse(model_name, version, id, response, &destinations, &binary),
                  "application/json",
                  {}};
  bool any_binary = false;
  for (const NamedTensor& output : response.outputs) {
    any_binary = any_binary || (destinations.binary.IsBinary(output.name) &&
                                destinations.shared_memory.Find(output.name) == nullptr);
  }
  if (any_binary) {
    reply.headers.emplace_back(std::string(kInferenceHeaderLength),
                               std::to_string(reply.body.size()));
    reply.content_type = "application/octet-stream";
    reply.body += binary;
  }
  return reply;
}

}  // namespace inferd
