#include "frontends/grpc/grpc_generate_codec.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "common/json_body.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"
#include "core/types/data_type.h"
#include "core/types/tensor.h"
#include "frontends/grpc/grpc_infer_codec.h"

namespace inferd {
namespace {

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// A parameter's value from either source (InferParameter or sampling_parameters' JSON).
struct Value {
  std::optional<double> number;
  std::optional<int64_t> integer;
  std::optional<std::string> text;
  std::optional<bool> flag;
  std::vector<std::string> list;  // a JSON list of strings
  bool is_list = false;
};

// Numbers sent as strings ("0.7"), as the vLLM backend reads them.
void ParseNumberText(Value& v) {
  const std::string& t = *v.text;
  int64_t i = 0;
  auto [iend, iec] = std::from_chars(t.data(), t.data() + t.size(), i);
  if (t == "true" || t == "false") v.flag = t == "true";
  if (iec == std::errc() && iend == t.data() + t.size()) {
    v.integer = i;
    v.number = static_cast<double>(i);
    return;
  }
  double d = 0;
  auto [dend, dec] = std::from_chars(t.data(), t.data() + t.size(), d);
  if (dec == std::errc() && dend == t.data() + t.size()) v.number = d;
}

absl::StatusOr<double> Number(const std::string& key, const Value& v, double min, double max) {
  if (!v.number || !(*v.number >= min && *v.number <= max)) {
    return Invalid(StrCat("parameter '", key, "' must be a number in [", min, ", ", max, "]"));
  }
  return *v.number;
}

absl::StatusOr<int64_t> Integer(const std::string& key, const Value& v, int64_t min, int64_t max) {
  if (!v.integer || *v.integer < min || *v.integer > max) {
    return Invalid(StrCat("parameter '", key, "' must be an integer in ", min, "..", max));
  }
  return *v.integer;
}

absl::Status Apply(const std::string& key, const Value& v, GenerateRequest& request) {
  if (key == "max_tokens") {
    ASSIGN_OR_RETURN(request.max_tokens, Integer(key, v, 1, 1 << 24));
  } else if (key == "temperature") {
    ASSIGN_OR_RETURN(request.sampling.temperature, Number(key, v, 0, 2));
  } else if (key == "top_p") {
    ASSIGN_OR_RETURN(request.sampling.top_p, Number(key, v, 0, 1));
    if (request.sampling.top_p <= 0) return Invalid("parameter 'top_p' must be in (0, 1]");
  } else if (key == "top_k") {
    ASSIGN_OR_RETURN(int64_t k, Integer(key, v, 0, 1 << 20));
    request.sampling.top_k = static_cast<int>(k);
  } else if (key == "seed") {
    ASSIGN_OR_RETURN(int64_t seed, Integer(key, v, INT64_MIN, INT64_MAX));
    request.sampling.seed = static_cast<uint32_t>(seed);
  } else if (key == "cache_prompt") {
    if (!v.flag) return Invalid("parameter 'cache_prompt' must be true or false");
    request.cache_prompt = *v.flag;
  } else if (key == "stop") {
    std::vector<std::string> stops = v.is_list ? v.list : std::vector<std::string>{};
    if (!v.is_list) {
      if (!v.text) return Invalid("parameter 'stop' must be a string or a list of strings");
      stops.push_back(*v.text);
    }
    if (stops.size() > kMaxStopStrings) {
      return Invalid(StrCat("at most ", kMaxStopStrings, " stop strings, got ", stops.size()));
    }
    request.stop.clear();
    for (std::string& stop : stops) {
      if (stop.size() > kMaxStopBytes) {
        return Invalid(StrCat("a stop string may have at most ", kMaxStopBytes, " bytes"));
      }
      if (!stop.empty()) request.stop.push_back(std::move(stop));
    }
  } else if (key == "min_p") {
    ASSIGN_OR_RETURN(request.sampling.min_p, Number(key, v, 0, 1));
  } else if (key == "presence_penalty") {
    ASSIGN_OR_RETURN(request.sampling.presence_penalty, Number(key, v, -2, 2));
  } else if (key == "frequency_penalty") {
    ASSIGN_OR_RETURN(request.sampling.frequency_penalty, Number(key, v, -2, 2));
  } else if (key == "repetition_penalty") {
    ASSIGN_OR_RETURN(request.sampling.repetition_penalty, Number(key, v, 0.01, 10));
  } else if (key == "repeat_last_n") {
    ASSIGN_OR_RETURN(int64_t n, Integer(key, v, 0, 1 << 16));
    request.sampling.penalty_last_n = static_cast<int>(n);
  } else if (key == "timeout" || key.starts_with("triton_")) {
    // The protocol's own: the timeout is read with the request (DecodeGrpcInferRequest);
    // Triton's triton_* flags describe the stream, which always ends with a final response.
  } else if (key == "priority") {
    if (!v.integer || *v.integer != 0) {
      return Invalid("parameter 'priority': a language model's requests have no priority levels");
    }
  } else {
    // Nothing is accepted and ignored: a sampling option inferd does not have would change
    // nothing, and the client would not know.
    return Invalid(StrCat("parameter '", key,
                          "' is not supported by this server (docs/llm.md lists what is)"));
  }
  return absl::OkStatus();
}

Value FromParameter(const inference::InferParameter& p) {
  Value v;
  switch (p.parameter_choice_case()) {
    case inference::InferParameter::kInt64Param:
      v.integer = p.int64_param();
      v.number = static_cast<double>(p.int64_param());
      break;
    case inference::InferParameter::kUint64Param:
      if (p.uint64_param() <= static_cast<uint64_t>(INT64_MAX)) {
        v.integer = static_cast<int64_t>(p.uint64_param());
      }
      v.number = static_cast<double>(p.uint64_param());
      break;
    case inference::InferParameter::kDoubleParam:
      v.number = p.double_param();
      break;
    case inference::InferParameter::kBoolParam:
      v.flag = p.bool_param();
      break;
    case inference::InferParameter::kStringParam:
      v.text = p.string_param();
      ParseNumberText(v);
      break;
    default:
      break;
  }
  return v;
}

absl::StatusOr<Value> FromJson(const std::string& key, simdjson::dom::element e) {
  Value v;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
  bool b = false;
  simdjson::dom::array list;
  if (!e.get(b)) {
    v.flag = b;
  } else if (!e.get(i)) {
    v.integer = i;
    v.number = static_cast<double>(i);
  } else if (!e.get(d)) {
    v.number = d;
  } else if (!e.get(s)) {
    v.text = std::string(s);
    ParseNumberText(v);
  } else if (!e.get(list)) {
    v.is_list = true;
    if (list.size() > kMaxStopStrings) {
      return Invalid(
          StrCat("sampling_parameters: '", key, "' has more than ", kMaxStopStrings, " items"));
    }
    for (simdjson::dom::element item : list) {
      if (item.get(s)) return Invalid(StrCat("sampling_parameters: '", key, "' must hold strings"));
      v.list.emplace_back(s);
    }
  }
  return v;
}

// The one element of a [1] input; InvalidArgument otherwise.
absl::Status CheckSingle(const NamedTensor& input, DataType type) {
  if (input.tensor.type() != type || input.tensor.element_count() != 1) {
    return Invalid(StrCat("input '", input.name, "' must be one ", DataTypeName(type),
                          " element, got ", DataTypeName(input.tensor.type()), " ",
                          ShapeToString(input.tensor.shape())));
  }
  return absl::OkStatus();
}

// The one BOOL element of a [1] input. Read as a byte: a raw input content is the client's
// bytes, and loading anything but 0 or 1 as a C++ bool is undefined behaviour.
absl::StatusOr<bool> SingleBool(const NamedTensor& input) {
  RETURN_IF_ERROR(CheckSingle(input, DataType::kBool));
  const uint8_t value = *input.tensor.data_as<uint8_t>();
  if (value > 1) {
    return Invalid(StrCat("input '", input.name, "' is BOOL and holds byte ", value,
                          "; send 0 (false) or 1 (true)"));
  }
  return value == 1;
}

}  // namespace

absl::StatusOr<GrpcGeneration> DecodeGrpcGeneration(const inference::ModelInferRequest& request) {
  ASSIGN_OR_RETURN(std::unique_ptr<InferRequest> decoded, DecodeGrpcInferRequest(request));
  GrpcGeneration out;
  out.request = std::make_unique<GenerateRequest>();
  out.request->id = request.id();
  out.timeout_us = decoded->timeout_us;
  GenerateRequest& generate = *out.request;
  bool has_prompt = false;
  std::optional<bool> exclude_input;
  std::string sampling_json;
  for (const NamedTensor& input : decoded->inputs) {
    if (input.name == "text_input") {
      RETURN_IF_ERROR(CheckSingle(input, DataType::kBytes));
      const std::string_view prompt = BytesElements(input.tensor)[0];
      if (prompt.size() > kMaxPromptBytes) {
        return Invalid(StrCat("the prompt has ", prompt.size(), " bytes; the server takes at most ",
                              kMaxPromptBytes, " bytes of prompt text"));
      }
      generate.prompt = std::string(prompt);
      has_prompt = true;
    } else if (input.name == "stream") {
      ASSIGN_OR_RETURN(out.stream, SingleBool(input));
    } else if (input.name == "exclude_input_in_output") {
      ASSIGN_OR_RETURN(exclude_input, SingleBool(input));
    } else if (input.name == "sampling_parameters") {
      RETURN_IF_ERROR(CheckSingle(input, DataType::kBytes));
      sampling_json = std::string(BytesElements(input.tensor)[0]);
    } else {
      return Invalid(StrCat("input '", input.name,
                            "' is not one a language model reads (text_input, stream, "
                            "exclude_input_in_output, sampling_parameters)"));
    }
  }
  if (!has_prompt) return Invalid("input 'text_input' (BYTES [1], the prompt) is required");
  if (out.stream && exclude_input == false) {
    return Invalid(
        "exclude_input_in_output false is not allowed with stream (as in Triton's "
        "vLLM backend): a stream sends only new text");
  }
  out.prepend_input = !out.stream && !exclude_input.value_or(false);
  for (const auto& [key, parameter] : request.parameters()) {
    RETURN_IF_ERROR(Apply(key, FromParameter(parameter), generate));
  }
  if (!sampling_json.empty()) {
    // Sampling parameters are a few numbers and at most kMaxStopStrings short strings.
    constexpr size_t kMaxSamplingJsonBytes = 64 << 10;
    if (sampling_json.size() > kMaxSamplingJsonBytes) {
      return Invalid(StrCat("input 'sampling_parameters' has ", sampling_json.size(),
                            " bytes; the server takes at most ", kMaxSamplingJsonBytes));
    }
    // The JSON body parser of every endpoint: its depth limit and its messages.
    absl::StatusOr<ParsedJson> json = ParseJsonBody(sampling_json, kMaxSamplingJsonBytes);
    if (!json.ok()) {
      return Invalid(StrCat("input 'sampling_parameters': ", json.status().message()));
    }
    simdjson::dom::object fields;
    if (json->root().get(fields))
      return Invalid("input 'sampling_parameters' must be a JSON object");
    for (auto field : fields) {
      const std::string key(field.key);
      ASSIGN_OR_RETURN(Value v, FromJson(key, field.value));
      RETURN_IF_ERROR(Apply(key, v, generate));
    }
  }
  return out;
}

void EncodeGrpcGeneration(std::string_view model, int64_t version, std::string_view id,
                          std::string_view text, const GenerationEvent* done,
                          inference::ModelInferResponse* out) {
  InferResponse response;
  absl::StatusOr<Tensor> tensor = MakeBytesTensor(Shape{1}, std::span(&text, 1));
  if (tensor.ok()) response.outputs.push_back(NamedTensor{"text_output", *std::move(tensor)});
  EncodeGrpcInferResponse(model, version, id, response, out);
  auto& parameters = *out->mutable_parameters();
  parameters["triton_final_response"].set_bool_param(done != nullptr);
  if (done == nullptr) return;
  parameters["finish_reason"].set_string_param(
      done->finish_reason == FinishReason::kLength ? "length" : "stop");
  parameters["prompt_tokens"].set_int64_param(done->usage.prompt_tokens);
  parameters["completion_tokens"].set_int64_param(done->usage.completion_tokens);
}

}  // namespace inferd
