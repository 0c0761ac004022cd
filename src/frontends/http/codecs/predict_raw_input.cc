#include "frontends/http/codecs/predict_raw_input.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {
namespace {

std::string_view ContentName(TensorContent content) {
  return content == TensorContent::kImage ? "an image" : "text";
}

std::string WhatToSend(const ModelConfig& config, const TensorSpec& spec) {
  if (spec.content == TensorContent::kImage) {
    return StrCat("model '", config.name,
                  "' takes an image: send its bytes with Content-Type image/jpeg (or image/png, "
                  "image/webp, application/octet-stream), or JSON {\"input\": \"<base64>\"}");
  }
  if (spec.datatype == DataType::kBytes) {
    return StrCat("model '", config.name,
                  "' takes text: send {\"input\": \"...\"} or a text/plain body");
  }
  return StrCat("model '", config.name, "' takes ", DataTypeName(spec.datatype),
                " tensors: send JSON {\"input\": <nested list of numbers>}");
}

// One instance's shape for a BYTES input: [1] for a batching model, else the input's dims.
Shape OneInstance(const ModelConfig& config, const TensorSpec& spec) {
  if (config.batched()) return Shape{1};
  return spec.dims.empty() ? Shape{} : Shape{1};
}

absl::StatusOr<std::string> DecodeBase64(std::string_view text, size_t index) {
  // A data URL ("data:image/png;base64,....") carries the base64 after the comma.
  if (text.starts_with("data:")) {
    const size_t comma = text.find(',');
    if (comma == std::string_view::npos ||
        text.substr(0, comma).find(";base64") == std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("'input' element ", index, " is a data URL that is not base64"));
    }
    text.remove_prefix(comma + 1);
  }
  std::string bytes;
  // Debian's Abseil has its own string_view type (not std::string_view).
  const absl::string_view encoded(text.data(), text.size());
  if (!absl::Base64Unescape(encoded, &bytes) && !absl::WebSafeBase64Unescape(encoded, &bytes)) {
    return absl::InvalidArgumentError(
        StrCat("'input' element ", index,
               " is not base64: send the image's bytes base64-encoded (or the file itself with "
               "Content-Type image/jpeg)"));
  }
  return bytes;
}

absl::StatusOr<std::string> ImageElement(simdjson::dom::element value, size_t index) {
  std::string_view text;
  simdjson::dom::object object;
  if (!value.get(object)) {
    if (object.size() != 1 || object["b64"].get(text)) {
      return absl::InvalidArgumentError(
          StrCat("'input' element ", index,
                 " must be a base64 string or {\"b64\": \"<base64>\"}: the model takes an image "
                 "(or send the file itself with Content-Type image/jpeg)"));
    }
  } else if (value.get(text)) {
    return absl::InvalidArgumentError(
        StrCat("'input' element ", index,
               " must be a base64 string or {\"b64\": \"<base64>\"}: the model takes an image "
               "(or send the file itself with Content-Type image/jpeg)"));
  }
  return DecodeBase64(text, index);
}

}  // namespace

std::string MediaType(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && absl::ascii_isspace(static_cast<unsigned char>(type.front()))) {
    type.remove_prefix(1);
  }
  while (!type.empty() && absl::ascii_isspace(static_cast<unsigned char>(type.back()))) {
    type.remove_suffix(1);
  }
  std::string lower(type);
  for (char& c : lower) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  return lower;
}

bool IsRawMediaType(std::string_view media_type) {
  return media_type.starts_with("image/") || media_type == "application/octet-stream" ||
         media_type == "text/plain";
}

absl::StatusOr<Tensor> RawBodyInput(const ModelConfig& config, std::string_view media_type,
                                    std::string_view body) {
  const TensorSpec& spec = config.inputs.front();
  // IsRawMediaType: an image (or bytes), or text/plain.
  const bool image_body = media_type != "text/plain";
  const TensorContent sent = image_body ? TensorContent::kImage : TensorContent::kText;
  const bool wrong_kind = spec.datatype != DataType::kBytes ||
                          (spec.content != TensorContent::kNone && spec.content != sent);
  if (wrong_kind) {
    return absl::InvalidArgumentError(StrCat("a ", media_type, " body holds ", ContentName(sent),
                                             ", but ", WhatToSend(config, spec)));
  }
  std::string_view element = body;
  return MakeBytesTensor(OneInstance(config, spec), std::span<const std::string_view>(&element, 1));
}

absl::StatusOr<std::optional<Tensor>> Base64ImageInput(const TensorSpec& spec,
                                                       simdjson::dom::element input) {
  if (spec.content != TensorContent::kImage) return std::optional<Tensor>();
  std::vector<std::string> images;
  simdjson::dom::array list;
  const bool batch = !input.get(list);
  if (batch) {
    for (simdjson::dom::element item : list) {
      ASSIGN_OR_RETURN(std::string bytes, ImageElement(item, images.size()));
      images.push_back(std::move(bytes));
    }
  } else {
    ASSIGN_OR_RETURN(std::string bytes, ImageElement(input, 0));
    images.push_back(std::move(bytes));
  }
  std::vector<std::string_view> views(images.begin(), images.end());
  Shape shape = batch ? Shape{static_cast<int64_t>(views.size())} : Shape{};
  ASSIGN_OR_RETURN(Tensor tensor, MakeBytesTensor(std::move(shape), views));
  return std::optional<Tensor>(std::move(tensor));
}

}  // namespace inferd
