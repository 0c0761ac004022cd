// What POST /predict accepts besides a nested list, for a model whose one input is BYTES (a
// pipeline taking images or text, config.yaml `content: image|text`):
//   - a raw body: `Content-Type: image/*` or `application/octet-stream` (the file's bytes),
//     or `text/plain` (the text), as one instance;
//   - in JSON, {"input": ...} where the image is base64: a string, a `data:image/...;base64,`
//     URL, or TF-Serving's {"b64": "..."}; a list of those is a batch.
// A body of the wrong kind for the model is a 400 that says what to send.
#ifndef INFERD_FRONTENDS_HTTP_CODECS_PREDICT_RAW_INPUT_H_
#define INFERD_FRONTENDS_HTTP_CODECS_PREDICT_RAW_INPUT_H_

#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "absl/status/statusor.h"
#include "core/config/model_config.h"
#include "core/types/tensor.h"

namespace inferd {

// The media type of a Content-Type header, lower-cased, without parameters ("image/jpeg").
std::string MediaType(std::string_view content_type);

// True for a media type /predict reads as the input itself: image/*,
// application/octet-stream, text/plain. Every other body is read as JSON, whatever it says it
// is (curl -d sends application/x-www-form-urlencoded; the seed's clients send none).
bool IsRawMediaType(std::string_view media_type);

// A raw (non-JSON) body as the model's one input: one element, shaped as one instance.
// InvalidArgument when the model does not take that kind of body.
absl::StatusOr<Tensor> RawBodyInput(const ModelConfig& config, std::string_view media_type,
                                    std::string_view body);

// {"input": ...} for an input with `content: image`: base64 strings, data URLs or {"b64"}
// objects (one, or a list of them) decoded to the image bytes. std::nullopt when `input` is
// for the usual nested-list path (the input is not an image input).
absl::StatusOr<std::optional<Tensor>> Base64ImageInput(const TensorSpec& spec,
                                                       simdjson::dom::element input);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_CODECS_PREDICT_RAW_INPUT_H_
