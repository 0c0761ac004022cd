#include "frontends/http/handlers/tfserving_handler.h"

#include <string>
#include <utility>
#include <vector>

#include "common/json_body.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/scheduling/batch_assembly.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// The value for input `spec` inside one instance (row format) or the "inputs" value
// (columnar): the value itself for a one-input model given a non-object, else the named field.
absl::StatusOr<element> ValueFor(const ModelConfig& config, const TensorSpec& spec, element value,
                                 std::string_view where) {
  object fields;
  if (config.inputs.size() == 1 && value.get(fields)) return value;
  // TF-Serving's binary value {"b64": "..."}: the value itself (json_tensor_codec decodes it),
  // not a map of input names.
  element encoded;
  if (config.inputs.size() == 1 && fields.size() == 1 && !fields["b64"].get(encoded)) return value;
  if (value.get(fields)) {
    return absl::InvalidArgumentError(
        StrCat(where, " must be an object {input_name: value}: model '", config.name, "' takes ",
               config.inputs.size(), " inputs"));
  }
  element field;
  if (fields[spec.name].get(field)) {
    return absl::InvalidArgumentError(StrCat(where, ": missing input '", spec.name, "'"));
  }
  return field;
}

// Row format: stacks the instances' values of one input into a [n, ...] tensor.
absl::StatusOr<Tensor> StackInstances(const ModelConfig& config, const TensorSpec& spec,
                                      simdjson::dom::array instances, int64_t max_elements) {
  std::vector<Tensor> rows;
  size_t index = 0;
  for (element instance : instances) {
    const std::string where = StrCat("instances[", index++, "]");
    ASSIGN_OR_RETURN(element value, ValueFor(config, spec, instance, where));
    ASSIGN_OR_RETURN(Tensor row,
                     DecodeNestedTensor(value, spec.datatype,
                                        StrCat(where, " input '", spec.name, "'"), max_elements));
    if (!rows.empty() && row.shape() != rows.front().shape()) {
      return absl::InvalidArgumentError(
          StrCat(where, " input '", spec.name, "': shape ", ShapeToString(row.shape()),
                 " differs from instances[0]'s ", ShapeToString(rows.front().shape())));
    }
    rows.push_back(std::move(row));
  }
  Shape shape = rows.front().shape();
  shape.insert(shape.begin(), static_cast<int64_t>(rows.size()));
  std::vector<const Tensor*> parts;
  for (const Tensor& row : rows) parts.push_back(&row);
  return ConcatenateTensors(parts, std::move(shape));
}

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeTfRequest(const ModelConfig& config,
                                                              std::string& body, bool* row_format) {
  const auto max_elements = static_cast<int64_t>(body.size());
  ASSIGN_OR_RETURN(const ParsedJson json, ParseJsonBody(body));
  const element root = json.root();
  element instances_value, inputs_value;
  const bool has_instances = !root["instances"].get(instances_value);
  const bool has_inputs = !root["inputs"].get(inputs_value);
  if (has_instances == has_inputs) {
    return absl::InvalidArgumentError(
        "the body needs exactly one of 'instances' (row format) or 'inputs' (columnar format)");
  }
  *row_format = has_instances;
  auto request = std::make_unique<InferRequest>();
  if (has_instances) {
    simdjson::dom::array instances;
    if (instances_value.get(instances) || instances.size() == 0) {
      return absl::InvalidArgumentError("'instances' must be a non-empty array");
    }
    if (!config.batched()) {
      return absl::InvalidArgumentError(
          StrCat("model '", config.name,
                 "' has no batch dimension (max_batch_size 0); send the columnar 'inputs' format"));
    }
    for (const TensorSpec& spec : config.inputs) {
      ASSIGN_OR_RETURN(Tensor tensor, StackInstances(config, spec, instances, max_elements));
      request->inputs.push_back({spec.name, std::move(tensor)});
    }
    return request;
  }
  for (const TensorSpec& spec : config.inputs) {
    ASSIGN_OR_RETURN(element value, ValueFor(config, spec, inputs_value, "'inputs'"));
    ASSIGN_OR_RETURN(
        Tensor tensor,
        DecodeNestedTensor(value, spec.datatype, StrCat("input '", spec.name, "'"), max_elements));
    request->inputs.push_back({spec.name, std::move(tensor)});
  }
  return request;
}

// One instance's slice of an output (row format), nested without the batch dimension.
void WriteRow(const Tensor& tensor, int64_t row, JsonWriter& writer) {
  std::span<const int64_t> shape(tensor.shape());
  shape = shape.subspan(1);
  int64_t stride = 1;
  for (int64_t dim : shape) stride *= dim;
  WriteNestedData(tensor, shape, row * stride, writer);
}

HttpReply EncodePredictions(const InferResponse& response) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("predictions");
  writer.StartArray();
  const int64_t rows = response.outputs.front().tensor.shape().front();
  for (int64_t row = 0; row < rows; ++row) {
    if (response.outputs.size() == 1) {
      WriteRow(response.outputs.front().tensor, row, writer);
      continue;
    }
    writer.StartObject();
    for (const NamedTensor& output : response.outputs) {
      writer.Key(output.name.c_str());
      WriteRow(output.tensor, row, writer);
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

HttpReply EncodeOutputs(const InferResponse& response) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("outputs");
  if (response.outputs.size() == 1) {
    const Tensor& tensor = response.outputs.front().tensor;
    WriteNestedData(tensor, tensor.shape(), 0, writer);
  } else {
    writer.StartObject();
    for (const NamedTensor& output : response.outputs) {
      writer.Key(output.name.c_str());
      WriteNestedData(output.tensor, output.tensor.shape(), 0, writer);
    }
    writer.EndObject();
  }
  writer.EndObject();
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

}  // namespace

void HandleTfServingPredict(const HandlerContext& ctx, const ModelRef& ref,
                            const HttpRequestView& request, ResponderPtr responder) {
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = ctx.inference->ConfigFor(ref.name);
  if (!config.ok()) return responder->Send(ErrorReply(config.status()));
  bool row_format = false;
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded =
      DecodeTfRequest(**config, *request.body, &row_format);
  if (!decoded.ok()) {
    NoteModelIfLoaded(ctx, *responder, ref.name, ref.version);
    return responder->Send(ErrorReply(decoded.status()));
  }
  if (absl::Status headers = ApplySchedulingHeaders(request, **decoded); !headers.ok()) {
    return responder->Send(ErrorReply(headers));
  }
  auto encode = [row_format](std::string_view, int64_t, const InferResponse& response) {
    return row_format ? EncodePredictions(response) : EncodeOutputs(response);
  };
  SubmitInference(ctx, ref.name, ref.version, *std::move(decoded), std::move(responder),
                  std::move(encode));
}

}  // namespace inferd
