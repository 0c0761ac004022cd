#include "frontends/http/handlers/plain_predict_handler.h"

#include <string>
#include <utility>

#include "common/json_body.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/codecs/json_tensor_codec.h"
#include "frontends/http/codecs/multipart_form.h"
#include "frontends/http/codecs/predict_answer.h"
#include "frontends/http/codecs/predict_raw_input.h"
#include "frontends/http/codecs/query_string.h"

namespace inferd {
namespace {

// The model's name and config (described without loading: a lazy model loads on submit).
absl::StatusOr<std::pair<std::string, std::shared_ptr<const ModelConfig>>> ResolveModel(
    const HandlerContext& ctx, std::string_view query) {
  std::string name;
  if (std::optional<std::string_view> named = QueryParameter(query, "model")) {
    name = std::string(*named);
  } else if (absl::StatusOr<std::string> fallback = ctx.inference->DefaultModel(); fallback.ok()) {
    name = *std::move(fallback);
  } else {
    return absl::InvalidArgumentError(
        StrCat(fallback.status().message(),
               ": add ?model=NAME or start inferd with --default-model NAME"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const ModelConfig> config, ctx.inference->ConfigFor(name));
  return std::make_pair(std::move(name), std::move(config));
}

absl::StatusOr<std::unique_ptr<InferRequest>> DecodePlainPredictRequest(
    const ModelConfig& config, std::string_view content_type, std::string& body,
    bool* single_instance) {
  const std::string media_type = MediaType(content_type);
  if (config.inputs.size() != 1) {
    return absl::InvalidArgumentError(StrCat(
        "model '", config.name, "' takes ", config.inputs.size(),
        " inputs; /predict serves one-input models (use /v2/models/", config.name, "/infer)"));
  }
  const TensorSpec& spec = config.inputs.front();
  auto request = std::make_unique<InferRequest>();
  if (media_type == "multipart/form-data") {
    // An upload (curl -F input=@photo.jpg): the part named input or file, as one instance.
    ASSIGN_OR_RETURN(const MultipartForm form, ParseMultipartForm(content_type, body));
    ASSIGN_OR_RETURN(const std::string_view part, form.InputPart());
    ASSIGN_OR_RETURN(Tensor raw, RawBodyInput(config, "application/octet-stream", part));
    *single_instance = true;
    request->inputs.push_back({spec.name, std::move(raw)});
    return request;
  }
  if (IsRawMediaType(media_type)) {
    // An image or a text as the body itself: one instance.
    ASSIGN_OR_RETURN(Tensor raw, RawBodyInput(config, media_type, body));
    *single_instance = true;
    request->inputs.push_back({spec.name, std::move(raw)});
    return request;
  }
  const auto max_elements = static_cast<int64_t>(body.size());
  ASSIGN_OR_RETURN(const ParsedJson json, ParseJsonBody(body));
  const simdjson::dom::element root = json.root();
  simdjson::dom::element input;
  if (root["input"].get(input)) {
    return absl::InvalidArgumentError(
        "the body must be a JSON object {\"input\": <nested list of numbers>}");
  }
  ASSIGN_OR_RETURN(std::optional<Tensor> image, Base64ImageInput(spec, input));
  ASSIGN_OR_RETURN(Tensor tensor,
                   image ? *std::move(image)
                         : DecodeNestedTensor(input, spec.datatype, "'input'", max_elements));
  // A batching model given one instance ([256] for dims [256]) gets a batch of one, and the
  // answer drops the batch dimension again: what a user of a one-example /predict expects.
  *single_instance = config.batched() && tensor.shape().size() == spec.dims.size();
  // One value for a model whose one input holds one value ([1]: a language model's prompt):
  // {"input": "Hello"} rather than {"input": ["Hello"]}, answered with one value too.
  const bool one_value = !config.batched() && tensor.shape().empty() && spec.dims == Shape{1};
  if (one_value) {
    tensor = Tensor::Wrap(tensor.type(), Shape{1}, tensor.mutable_data(), tensor.byte_size(),
                          tensor.owner());
    *single_instance = true;
  } else if (*single_instance) {
    Shape batched = tensor.shape();
    batched.insert(batched.begin(), 1);
    tensor = Tensor::Wrap(tensor.type(), std::move(batched), tensor.mutable_data(),
                          tensor.byte_size(), tensor.owner());
  }
  request->inputs.push_back({spec.name, std::move(tensor)});
  return request;
}

void WriteOutput(const Tensor& tensor, bool single_instance, JsonWriter& writer) {
  std::span<const int64_t> shape(tensor.shape());
  if (single_instance && !shape.empty()) shape = shape.subspan(1);
  WriteNestedData(tensor, shape, 0, writer);
}

}  // namespace

void HandlePlainPredict(const HandlerContext& ctx, const HttpRequestView& request,
                        ResponderPtr responder) {
  auto model = ResolveModel(ctx, request.query);
  if (!model.ok()) return responder->Send(ErrorReply(model.status()));
  bool single_instance = false;
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodePlainPredictRequest(
      *model->second, request.Header("Content-Type"), *request.body, &single_instance);
  if (!decoded.ok()) {
    NoteModelIfLoaded(ctx, *responder, model->first, std::nullopt);
    return responder->Send(ErrorReply(decoded.status()));
  }
  if (absl::Status headers = ApplySchedulingHeaders(request, **decoded); !headers.ok()) {
    return responder->Send(ErrorReply(headers));
  }

  auto encode = [single_instance, config = model->second](std::string_view, int64_t,
                                                          const InferResponse& response) {
    // A pipeline that names its labels and scores answers with them.
    if (std::optional<std::string> labels = EncodeLabelAnswer(*config, response, single_instance)) {
      return HttpReply{200, *std::move(labels), "application/json", {}};
    }
    rapidjson::StringBuffer buffer;
    JsonWriter writer(buffer);
    writer.StartObject();
    writer.Key("output");
    if (response.outputs.size() == 1) {
      WriteOutput(response.outputs.front().tensor, single_instance, writer);
    } else {
      writer.StartObject();
      for (const NamedTensor& output : response.outputs) {
        writer.Key(output.name.c_str());
        WriteOutput(output.tensor, single_instance, writer);
      }
      writer.EndObject();
    }
    writer.EndObject();
    return HttpReply{
        200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
  };
  SubmitInference(ctx, model->first, std::nullopt, *std::move(decoded), std::move(responder),
                  std::move(encode));
}

}  // namespace inferd
