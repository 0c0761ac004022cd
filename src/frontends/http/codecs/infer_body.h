// KServe v2 infer bodies with the binary tensor extension: the request body is a JSON header
// of `Inference-Header-Content-Length` bytes followed by the binary inputs, and the reply
// carries binary outputs after its JSON the same way. Without the header a body is JSON only.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_INFER_BODY_H_
#define INFERD_FRONTENDS_HTTP_CODECS_INFER_BODY_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/backend/infer_request.h"
#include "frontends/http/codecs/kserve_codec.h"
#include "frontends/http/http_types.h"

namespace inferd {

inline constexpr std::string_view kInferenceHeaderLength = "Inference-Header-Content-Length";

struct DecodedInferBody {
  std::unique_ptr<InferRequest> request;
  OutputDestinations outputs;
};

// Decodes the body of POST .../infer. With the binary extension the body moves into a
// shared buffer that the binary input tensors view without copying. InvalidArgument (400)
// for a header length that is not a number or runs past the body, binary sizes that do not
// match their shapes or the body, and bytes left over. Inputs and outputs may name regions of
// `shared_memory` (null: the shared-memory extension is off) that belong to the caller's tenant
// (view.tenant): another tenant's region is as unknown as one nobody registered.
absl::StatusOr<DecodedInferBody> DecodeInferBody(const HttpRequestView& view,
                                                 const SharedMemoryRegistry* shared_memory);

// 200 with the JSON response, followed by the binary outputs (and the header giving the JSON's
// length) when the request asked for any. Outputs bound for shared memory are written there
// first; an error writing them is the reply instead.
HttpReply EncodeInferReply(std::string_view model_name, int64_t version, std::string_view id,
                           const InferResponse& response, const OutputDestinations& destinations);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_INFER_BODY_H_
