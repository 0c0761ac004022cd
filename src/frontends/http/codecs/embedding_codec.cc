#include "frontends/http/codecs/embedding_codec.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "absl/strings/escaping.h"
#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/codecs/generation_codec.h"

namespace inferd {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// InvalidArgument naming `field` (common/error_detail.h): OpenAI's "param".
absl::Status InvalidField(std::string_view field, const std::string& message) {
  return WithErrorField(absl::InvalidArgumentError(message), field);
}

absl::Status AddInput(element item, size_t index, bool listed, size_t* bytes,
                      std::vector<std::string>* out) {
  std::string_view text;
  if (item.get(text)) {
    if (item.is_int64() || item.is_uint64() || item.is_array()) {
      return InvalidField(
          "input",
          "'input' as token ids is not supported: send the text (a string or a list of "
          "strings)");
    }
    return InvalidField("input", "'input' must be a string or a list of strings");
  }
  if (text.empty()) {
    return InvalidField("input",
                        listed ? StrCat("input[", index, "] is empty") : "'input' is empty");
  }
  *bytes += text.size();
  RETURN_IF_ERROR(CheckPromptBytes(*bytes, "input"));
  out->emplace_back(text);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedEmbeddings> ParseEmbeddingsRequest(element body) {
  object o;
  if (body.get(o)) return Invalid("the request body must be a JSON object");
  ParsedEmbeddings parsed;
  std::string_view model;
  if (o["model"].get(model) || model.empty()) {
    return InvalidField(
        "model", "'model' is required: the name of a model this server serves (GET /v1/models)");
  }
  parsed.model = std::string(model);
  parsed.request = std::make_unique<EmbedRequest>();
  element input;
  if (o["input"].get(input) || input.is_null()) {
    return InvalidField("input", "'input' is required: a string or a list of strings");
  }
  size_t bytes = 0;
  std::vector<std::string>& inputs = parsed.request->inputs;
  array list;
  if (!input.get(list)) {
    if (list.size() == 0) return InvalidField("input", "'input' must not be empty");
    if (list.size() > kMaxEmbeddingInputs) {
      return InvalidField("input", StrCat("'input' may hold at most ", kMaxEmbeddingInputs,
                                          " texts, got ", list.size()));
    }
    size_t index = 0;
    for (element item : list) RETURN_IF_ERROR(AddInput(item, index++, true, &bytes, &inputs));
  } else {
    RETURN_IF_ERROR(AddInput(input, 0, false, &bytes, &inputs));
  }
  element format;
  if (!o["encoding_format"].get(format) && !format.is_null()) {
    std::string_view name;
    if (format.get(name) || (name != "float" && name != "base64")) {
      return InvalidField("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
    }
    parsed.base64 = name == "base64";
  }
  element dimensions;
  if (!o["dimensions"].get(dimensions) && !dimensions.is_null()) {
    int64_t n = 0;
    if (dimensions.get(n) || n < 1 || n > (1 << 20)) {
      return InvalidField("dimensions", "'dimensions' must be a positive integer");
    }
    parsed.request->dimensions = n;
  }
  return parsed;
}

HttpReply EncodeEmbeddingsReply(std::string_view model, bool base64, const EmbedResult& result) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("data");
  w.StartArray();
  std::string packed, encoded;
  for (size_t i = 0; i < result.embeddings.size(); ++i) {
    const std::vector<float>& vector = result.embeddings[i];
    w.StartObject();
    w.Key("object");
    w.String("embedding");
    w.Key("index");
    w.Uint64(i);
    w.Key("embedding");
    if (base64) {
      // The bytes of the floats as they lie in memory, which is OpenAI's little-endian.
      static_assert(std::endian::native == std::endian::little);
      packed.resize(vector.size() * sizeof(float));
      if (!vector.empty()) std::memcpy(packed.data(), vector.data(), packed.size());
      absl::Base64Escape(packed, &encoded);
      w.String(encoded.data(), static_cast<rapidjson::SizeType>(encoded.size()));
    } else {
      w.StartArray();
      for (float v : vector) {
        if (!std::isfinite(v)) {  // JSON has no NaN; a broken model must not break the reply
          w.Null();
          continue;
        }
        // The shortest text that reads back as the same float (a double's would be longer).
        char text[32];
        auto [end, ec] = std::to_chars(text, text + sizeof(text), v);
        w.RawValue(text, static_cast<size_t>(end - text), rapidjson::kNumberType);
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("model");
  w.String(model.data(), static_cast<rapidjson::SizeType>(model.size()));
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(result.prompt_tokens);
  w.Key("total_tokens");
  w.Int64(result.prompt_tokens);
  w.EndObject();
  w.EndObject();
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

}  // namespace inferd
