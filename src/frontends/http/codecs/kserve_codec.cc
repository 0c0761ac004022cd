#include "frontends/http/codecs/kserve_codec.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "common/json_body.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

absl::StatusOr<Shape> DecodeShape(object input, std::string_view where) {
  ASSIGN_OR_RETURN(simdjson::dom::array dims, GetArray(input, "shape", where));
  Shape shape;
  for (element dim : dims) {
    int64_t value;
    if (dim.get(value) || value < 0) {
      return absl::InvalidArgumentError(
          StrCat(where, ": 'shape' must be a list of non-negative integers, got ",
                 simdjson::minify(dims)));
    }
    shape.push_back(value);
  }
  return shape;
}

// A non-negative integer inside a tensor's "parameters".
absl::StatusOr<std::optional<uint64_t>> UnsignedParameter(object parameters, std::string_view name,
                                                          std::string_view where) {
  element value;
  if (parameters[name].get(value)) return std::nullopt;
  uint64_t number;
  if (value.get(number)) {
    return absl::InvalidArgumentError(
        StrCat(where, ": '", name, "' must be a non-negative integer"));
  }
  return number;
}

// A tensor's shared-memory parameters, if it has them: "shared_memory_region" and
// "shared_memory_byte_size" together, "shared_memory_offset" optional.
absl::StatusOr<std::optional<SharedMemoryParameters>> SharedMemoryOf(object tensor,
                                                                     std::string_view where) {
  element value;
  object parameters;
  if (tensor["parameters"].get(value) || value.get(parameters)) return std::nullopt;
  element region;
  const bool has_region = !parameters["shared_memory_region"].get(region);
  ASSIGN_OR_RETURN(std::optional<uint64_t> byte_size,
                   UnsignedParameter(parameters, "shared_memory_byte_size", where));
  if (!has_region && !byte_size) return std::nullopt;
  std::string_view name;
  if (!has_region || region.get(name) || !byte_size) {
    return absl::InvalidArgumentError(
        StrCat(where,
               ": shared memory needs both 'shared_memory_region' (a string) and "
               "'shared_memory_byte_size'"));
  }
  ASSIGN_OR_RETURN(std::optional<uint64_t> offset,
                   UnsignedParameter(parameters, "shared_memory_offset", where));
  return SharedMemoryParameters{std::string(name), offset.value_or(0), *byte_size};
}

absl::Status SharedMemoryOff(std::string_view where) {
  return absl::InvalidArgumentError(
      StrCat(where,
             ": names a shared-memory region, but shared memory is not available on "
             "this endpoint"));
}

// The input's "binary_data_size" parameter, if it has one.
absl::StatusOr<std::optional<uint64_t>> BinaryDataSize(object input, std::string_view where) {
  element parameters;
  if (input["parameters"].get(parameters)) return std::nullopt;
  element size;
  if (parameters["binary_data_size"].get(size)) return std::nullopt;
  uint64_t value;
  if (size.get(value)) {
    return absl::InvalidArgumentError(
        StrCat(where, ": 'binary_data_size' must be a non-negative integer"));
  }
  return value;
}

absl::StatusOr<NamedTensor> DecodeInput(element value, size_t index, int64_t max_elements,
                                        const InferBodyExtensions& extensions) {
  std::string where = StrCat("inputs[", index, "]");
  object input;
  if (value.get(input)) return absl::InvalidArgumentError(where + ": must be an object");
  ASSIGN_OR_RETURN(std::string_view name, GetString(input, "name", where));
  where = StrCat("input '", name, "'");
  ASSIGN_OR_RETURN(std::string_view type_name, GetString(input, "datatype", where));
  std::optional<DataType> type = ParseDataType(type_name);
  if (!type) {
    return absl::InvalidArgumentError(
        StrCat(where, ": datatype '", type_name, "' is not one of ", AllDataTypeNames()));
  }
  ASSIGN_OR_RETURN(Shape shape, DecodeShape(input, where));
  ASSIGN_OR_RETURN(std::optional<uint64_t> binary_size, BinaryDataSize(input, where));
  ASSIGN_OR_RETURN(std::optional<SharedMemoryParameters> shared, SharedMemoryOf(input, where));
  element data;
  const bool has_data = !input["data"].get(data);
  if (shared) {
    if (has_data || binary_size) {
      return absl::InvalidArgumentError(
          StrCat(where,
                 ": has shared-memory parameters and also 'data' or 'binary_data_size'; "
                 "send one"));
    }
    if (extensions.shared_memory == nullptr) return SharedMemoryOff(where);
    ASSIGN_OR_RETURN(SharedMemorySlice slice, extensions.shared_memory->Slice(*shared, where));
    ASSIGN_OR_RETURN(Tensor tensor,
                     extensions.shared_memory->ReadTensor(slice, *type, std::move(shape), where));
    return NamedTensor{std::string(name), std::move(tensor)};
  }
  BinaryTensorReader* binary = extensions.binary;
  if (binary_size) {
    if (has_data) {
      return absl::InvalidArgumentError(
          StrCat(where, ": has both 'data' and 'binary_data_size'; send one"));
    }
    if (binary == nullptr) {
      return absl::InvalidArgumentError(
          StrCat(where,
                 ": 'binary_data_size' needs the binary tensor extension: send the JSON length "
                 "in the Inference-Header-Content-Length header and the tensors after it"));
    }
    ASSIGN_OR_RETURN(Tensor tensor, binary->Next(*type, std::move(shape), *binary_size, where));
    return NamedTensor{std::string(name), std::move(tensor)};
  }
  if (!has_data) {
    return absl::InvalidArgumentError(
        StrCat(where,
               ": 'data' is required (or 'parameters': {'binary_data_size'} with the "
               "binary tensor extension)"));
  }
  ASSIGN_OR_RETURN(Tensor tensor,
                   DecodeTensorData(data, *type, std::move(shape), where, max_elements));
  return NamedTensor{std::string(name), std::move(tensor)};
}

// A non-negative integer request parameter, if present.
absl::StatusOr<std::optional<int64_t>> IntegerParameter(object parameters, std::string_view name,
                                                        std::string_view meaning) {
  element value;
  if (parameters[name].get(value)) return std::nullopt;
  int64_t number;
  if (value.get(number) || number < 0) {
    return absl::InvalidArgumentError(
        StrCat("parameter '", name, "' must be a non-negative integer (", meaning, ")"));
  }
  return number;
}

// A boolean parameter, if present.
absl::StatusOr<std::optional<bool>> BoolParameter(object parameters, std::string_view name) {
  element value;
  if (parameters[name].get(value)) return std::nullopt;
  bool flag;
  if (value.get(flag)) {
    return absl::InvalidArgumentError(StrCat("parameter '", name, "' must be true or false"));
  }
  return flag;
}

// Request parameters the scheduler understands: "priority" (1 = highest) and "timeout"
// (microseconds in the queue). Others are ignored, as the protocol allows.
absl::Status DecodeParameters(object request, InferRequest& decoded) {
  element value;
  if (request["parameters"].get(value)) return absl::OkStatus();
  object parameters;
  if (value.get(parameters)) return absl::InvalidArgumentError("'parameters' must be an object");
  ASSIGN_OR_RETURN(std::optional<int64_t> priority,
                   IntegerParameter(parameters, "priority", "1 = highest"));
  if (priority) decoded.priority = static_cast<int>(std::min<int64_t>(*priority, 1 << 20));
  ASSIGN_OR_RETURN(std::optional<int64_t> timeout,
                   IntegerParameter(parameters, "timeout", "microseconds"));
  if (timeout) decoded.timeout_us = *timeout;
  return absl::OkStatus();
}

absl::Status DecodeBinaryOutputDefault(object request, BinaryOutputs& outputs) {
  element value;
  if (request["parameters"].get(value)) return absl::OkStatus();
  object parameters;
  if (value.get(parameters)) return absl::OkStatus();  // DecodeParameters reports it
  ASSIGN_OR_RETURN(std::optional<bool> all, BoolParameter(parameters, "binary_data_output"));
  outputs.all = all.value_or(false);
  return absl::OkStatus();
}

// One entry of "outputs": its name, and where the client wants it sent.
absl::Status DecodeRequestedOutput(element output, size_t index,
                                   const InferBodyExtensions& extensions, InferRequest& decoded) {
  const std::string where = StrCat("outputs[", index, "]");
  object entry;
  if (output.get(entry)) return absl::InvalidArgumentError(where + ": must be an object");
  ASSIGN_OR_RETURN(std::string_view name, GetString(entry, "name", where));
  decoded.requested_outputs.emplace_back(name);
  const std::string what = StrCat("output '", name, "'");
  OutputDestinations* destinations = extensions.outputs;
  ASSIGN_OR_RETURN(std::optional<SharedMemoryParameters> shared, SharedMemoryOf(entry, what));
  if (shared) {
    if (extensions.shared_memory == nullptr || destinations == nullptr) {
      return SharedMemoryOff(what);
    }
    ASSIGN_OR_RETURN(SharedMemorySlice slice, extensions.shared_memory->Slice(*shared, what));
    destinations->shared_memory.Add(std::string(name), std::move(slice));
    return absl::OkStatus();
  }
  element parameters;
  object parameter_object;
  if (destinations != nullptr && !entry["parameters"].get(parameters) &&
      !parameters.get(parameter_object)) {
    ASSIGN_OR_RETURN(std::optional<bool> flag, BoolParameter(parameter_object, "binary_data"));
    if (flag) destinations->binary.per_output.emplace_back(name, *flag);
  }
  return absl::OkStatus();
}

}  // namespace

bool BinaryOutputs::IsBinary(std::string_view name) const {
  for (const auto& [output, binary] : per_output) {
    if (output == name) return binary;
  }
  return all;
}

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeInferRequest(
    std::string& body, const InferBodyExtensions& extensions) {
  ASSIGN_OR_RETURN(const ParsedJson json, ParseJsonBody(body));
  const element root = json.root();
  object request;
  if (root.get(request)) {
    return absl::InvalidArgumentError("the request body must be a JSON object with 'inputs'");
  }
  auto decoded = std::make_unique<InferRequest>();
  element id;
  if (!request["id"].get(id)) {
    std::string_view text;
    if (id.get(text)) return absl::InvalidArgumentError("'id' must be a string");
    decoded->id = std::string(text);
  }
  RETURN_IF_ERROR(DecodeParameters(request, *decoded));
  if (extensions.outputs != nullptr) {
    RETURN_IF_ERROR(DecodeBinaryOutputDefault(request, extensions.outputs->binary));
  }
  ASSIGN_OR_RETURN(simdjson::dom::array inputs, GetArray(request, "inputs", "the request"));
  if (inputs.size() == 0) return absl::InvalidArgumentError("'inputs' is empty");
  const auto max_elements = static_cast<int64_t>(body.size());
  size_t index = 0;
  for (element input : inputs) {
    ASSIGN_OR_RETURN(NamedTensor tensor, DecodeInput(input, index++, max_elements, extensions));
    decoded->inputs.push_back(std::move(tensor));
  }
  element outputs;
  if (!request["outputs"].get(outputs)) {
    simdjson::dom::array list;
    if (outputs.get(list)) return absl::InvalidArgumentError("'outputs' must be an array");
    index = 0;
    for (element output : list) {
      RETURN_IF_ERROR(DecodeRequestedOutput(output, index++, extensions, *decoded));
    }
  }
  return decoded;
}

std::string EncodeInferResponse(std::string_view model_name, int64_t version, std::string_view id,
                                const InferResponse& response,
                                const OutputDestinations* destinations, std::string* binary_data) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("model_name");
  WriteString(writer, model_name);
  writer.Key("model_version");
  const std::string version_text = std::to_string(version);
  writer.String(version_text.c_str());
  if (!id.empty()) {
    writer.Key("id");
    WriteString(writer, id);
  }
  writer.Key("outputs");
  writer.StartArray();
  for (const NamedTensor& output : response.outputs) {
    writer.StartObject();
    writer.Key("name");
    writer.String(output.name.c_str());
    writer.Key("datatype");
    WriteString(writer, DataTypeName(output.tensor.type()));
    writer.Key("shape");
    writer.StartArray();
    for (int64_t dim : output.tensor.shape()) writer.Int64(dim);
    writer.EndArray();
    const SharedMemorySlice* shared =
        destinations != nullptr ? destinations->shared_memory.Find(output.name) : nullptr;
    if (shared != nullptr) {
      // Written to shared memory already: no data and no parameters here (Triton's HTTP
      // client reads any output "parameters" as the binary extension's).
    } else if (destinations != nullptr && binary_data != nullptr &&
               destinations->binary.IsBinary(output.name)) {
      writer.Key("parameters");
      writer.StartObject();
      writer.Key("binary_data_size");
      writer.Uint64(output.tensor.byte_size());
      writer.EndObject();
      binary_data->append(reinterpret_cast<const char*>(output.tensor.data()),
                          output.tensor.byte_size());
    } else {
      writer.Key("data");
      WriteFlatData(output.tensor, writer);
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace inferd
