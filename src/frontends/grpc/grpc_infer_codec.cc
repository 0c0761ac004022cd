#include "frontends/grpc/grpc_infer_codec.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {
namespace {

using InputTensor = inference::ModelInferRequest::InferInputTensor;

absl::StatusOr<Tensor> FromRaw(const std::string& raw, DataType type, Shape shape,
                               std::string_view what) {
  ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(raw.data()),
                                         raw.size());
  if (type == DataType::kBytes) {
    RETURN_IF_ERROR(ValidateBytesBuffer(bytes, count, what));
    auto owned = std::make_shared<std::string>(raw);
    // Read before the move below: argument evaluation order is unspecified.
    void* data = owned->data();
    const size_t size = owned->size();
    return Tensor::Wrap(type, std::move(shape), data, size, std::move(owned));
  }
  const size_t element_size = DataTypeSize(type);
  if (static_cast<uint64_t>(count) > raw.size() / element_size ||
      static_cast<size_t>(count) * element_size != raw.size()) {
    return absl::InvalidArgumentError(
        StrCat(what, ": shape ", ShapeToString(shape), " of ", DataTypeName(type), " needs ", count,
               " x ", element_size, " bytes, but raw_input_contents has ", raw.size()));
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateForOverwrite(type, std::move(shape)));
  if (!raw.empty()) std::memcpy(tensor.mutable_data(), raw.data(), raw.size());
  return tensor;
}

template <typename Out, typename Field>
absl::StatusOr<Tensor> FromTyped(const Field& values, DataType type, Shape shape,
                                 std::string_view field, std::string_view what) {
  ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  if (count != values.size()) {
    return absl::InvalidArgumentError(StrCat(what, ": shape ", ShapeToString(shape), " needs ",
                                             count, " elements, but contents.", field, " has ",
                                             values.size()));
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateForOverwrite(type, std::move(shape)));
  Out* out = tensor.mutable_data_as<Out>();
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool>) {
      if (!std::in_range<Out>(v)) {
        return absl::InvalidArgumentError(
            StrCat(what, ": element ", i, " (", v, ") is out of range for ", DataTypeName(type)));
      }
    }
    out[i] = static_cast<Out>(v);
  }
  return tensor;
}

absl::StatusOr<Tensor> FromContents(const InputTensor& input, DataType type, Shape shape,
                                    std::string_view what) {
  const inference::InferTensorContents& c = input.contents();
  switch (type) {
    case DataType::kBool:
      return FromTyped<bool>(c.bool_contents(), type, std::move(shape), "bool_contents", what);
    case DataType::kUint8:
      return FromTyped<uint8_t>(c.uint_contents(), type, std::move(shape), "uint_contents", what);
    case DataType::kUint16:
      return FromTyped<uint16_t>(c.uint_contents(), type, std::move(shape), "uint_contents", what);
    case DataType::kUint32:
      return FromTyped<uint32_t>(c.uint_contents(), type, std::move(shape), "uint_contents", what);
    case DataType::kUint64:
      return FromTyped<uint64_t>(c.uint64_contents(), type, std::move(shape), "uint64_contents",
                                 what);
    case DataType::kInt8:
      return FromTyped<int8_t>(c.int_contents(), type, std::move(shape), "int_contents", what);
    case DataType::kInt16:
      return FromTyped<int16_t>(c.int_contents(), type, std::move(shape), "int_contents", what);
    case DataType::kInt32:
      return FromTyped<int32_t>(c.int_contents(), type, std::move(shape), "int_contents", what);
    case DataType::kInt64:
      return FromTyped<int64_t>(c.int64_contents(), type, std::move(shape), "int64_contents", what);
    case DataType::kFp32:
      return FromTyped<float>(c.fp32_contents(), type, std::move(shape), "fp32_contents", what);
    case DataType::kFp64:
      return FromTyped<double>(c.fp64_contents(), type, std::move(shape), "fp64_contents", what);
    case DataType::kBytes: {
      std::vector<std::string_view> elements(c.bytes_contents().begin(), c.bytes_contents().end());
      ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
      if (count != static_cast<int64_t>(elements.size())) {
        return absl::InvalidArgumentError(
            StrCat(what, ": shape ", ShapeToString(shape), " needs ", count,
                   " elements, but contents.bytes_contents has ", elements.size()));
      }
      return MakeBytesTensor(std::move(shape), elements);
    }
    case DataType::kFp16:
    case DataType::kBf16:
      break;
  }
  return absl::InvalidArgumentError(
      StrCat(what, ": ", DataTypeName(type),
             " has no typed contents field in the protocol; send it in raw_input_contents"));
}

// A non-negative integer parameter sent as int64_param or uint64_param.
absl::StatusOr<std::optional<int64_t>> IntegerParameter(const inference::ModelInferRequest& request,
                                                        const std::string& name) {
  auto it = request.parameters().find(name);
  if (it == request.parameters().end()) return std::nullopt;
  const inference::InferParameter& p = it->second;
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0) {
    return p.int64_param();
  }
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param &&
      p.uint64_param() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(p.uint64_param());
  }
  return absl::InvalidArgumentError(
      StrCat("parameter '", name, "' must be a non-negative int64_param or uint64_param"));
}

using Parameters = google::protobuf::Map<std::string, inference::InferParameter>;

// A non-negative integer tensor parameter (int64_param or uint64_param), if present.
absl::StatusOr<std::optional<uint64_t>> UnsignedParameter(const Parameters& parameters,
                                                          const std::string& name,
                                                          std::string_view what) {
  auto it = parameters.find(name);
  if (it == parameters.end()) return std::nullopt;
  const inference::InferParameter& p = it->second;
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0) {
    return static_cast<uint64_t>(p.int64_param());
  }
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param) {
    return p.uint64_param();
  }
  return absl::InvalidArgumentError(
      StrCat(what, ": '", name, "' must be a non-negative int64_param or uint64_param"));
}

// A tensor's shared-memory parameters, if it has them: "shared_memory_region" (string_param)
// and "shared_memory_byte_size" together, "shared_memory_offset" optional.
absl::StatusOr<std::optional<SharedMemoryParameters>> SharedMemoryOf(const Parameters& parameters,
                                                                     std::string_view what) {
  auto region = parameters.find("shared_memory_region");
  ASSIGN_OR_RETURN(std::optional<uint64_t> byte_size,
                   UnsignedParameter(parameters, "shared_memory_byte_size", what));
  if (region == parameters.end() && !byte_size) return std::nullopt;
  if (region == parameters.end() ||
      region->second.parameter_choice_case() != inference::InferParameter::kStringParam ||
      !byte_size) {
    return absl::InvalidArgumentError(
        StrCat(what,
               ": shared memory needs both 'shared_memory_region' (a string_param) and "
               "'shared_memory_byte_size'"));
  }
  ASSIGN_OR_RETURN(std::optional<uint64_t> offset,
                   UnsignedParameter(parameters, "shared_memory_offset", what));
  return SharedMemoryParameters{region->second.string_param(), offset.value_or(0), *byte_size};
}

absl::Status SharedMemoryOff(std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat(what, ": names a shared-memory region, but shared memory is not available here"));
}

}  // namespace

absl::Status CheckGrpcRequestId(const inference::ModelInferRequest& request) {
  if (request.id().size() <= kMaxClientIdBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("the request id has ", request.id().size(),
                                           " bytes; the server takes at most ", kMaxClientIdBytes,
                                           " (it is echoed into every response)"));
}

absl::StatusOr<std::unique_ptr<InferRequest>> DecodeGrpcInferRequest(
    const inference::ModelInferRequest& request, const SharedMemoryScope* shared_memory,
    SharedMemoryOutputs* shared_memory_outputs) {
  RETURN_IF_ERROR(CheckGrpcRequestId(request));
  auto decoded = std::make_unique<InferRequest>();
  decoded->id = request.id();
  ASSIGN_OR_RETURN(std::optional<int64_t> priority, IntegerParameter(request, "priority"));
  if (priority) decoded->priority = static_cast<int>(std::min<int64_t>(*priority, 1 << 20));
  ASSIGN_OR_RETURN(std::optional<int64_t> timeout, IntegerParameter(request, "timeout"));
  if (timeout) decoded->timeout_us = *timeout;

  if (request.inputs_size() == 0) return absl::InvalidArgumentError("'inputs' is empty");
  // Inputs in shared memory have no raw entry: the entries belong to the others, in order.
  std::vector<std::optional<SharedMemoryParameters>> shared(request.inputs_size());
  int in_band = 0;
  for (int i = 0; i < request.inputs_size(); ++i) {
    ASSIGN_OR_RETURN(shared[i], SharedMemoryOf(request.inputs(i).parameters(),
                                               StrCat("input '", request.inputs(i).name(), "'")));
    if (!shared[i]) ++in_band;
  }
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != in_band) {
    return absl::InvalidArgumentError(
        StrCat("raw_input_contents has ", request.raw_input_contents_size(),
               " entries but there are ", in_band,
               " inputs not in shared memory: send one raw entry per such input, or none and "
               "use contents"));
  }
  int raw_index = 0;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const InputTensor& input = request.inputs(i);
    const std::string what = StrCat("input '", input.name(), "'");
    std::optional<DataType> type = ParseDataType(input.datatype());
    if (!type) {
      return absl::InvalidArgumentError(
          StrCat(what, ": datatype '", input.datatype(), "' is not one of ", AllDataTypeNames()));
    }
    Shape shape(input.shape().begin(), input.shape().end());
    for (int64_t dim : shape) {
      if (dim < 0) {
        return absl::InvalidArgumentError(
            StrCat(what, ": shape ", ShapeToString(shape), " has a negative dimension"));
      }
    }
    if (shared[i]) {
      if (input.has_contents()) {
        return absl::InvalidArgumentError(
            StrCat(what, ": has both contents and shared-memory parameters; send one"));
      }
      if (shared_memory == nullptr) return SharedMemoryOff(what);
      ASSIGN_OR_RETURN(SharedMemorySlice slice, shared_memory->Slice(*shared[i], what));
      ASSIGN_OR_RETURN(Tensor tensor,
                       shared_memory->ReadTensor(slice, *type, std::move(shape), what));
      decoded->inputs.push_back(NamedTensor{input.name(), std::move(tensor)});
      continue;
    }
    if (raw && input.has_contents()) {
      return absl::InvalidArgumentError(
          StrCat(what, ": has both contents and raw_input_contents; send one"));
    }
    absl::StatusOr<Tensor> tensor =
        raw ? FromRaw(request.raw_input_contents(raw_index++), *type, std::move(shape), what)
            : FromContents(input, *type, std::move(shape), what);
    if (!tensor.ok()) return tensor.status();
    decoded->inputs.push_back(NamedTensor{input.name(), *std::move(tensor)});
  }
  for (const auto& output : request.outputs()) {
    decoded->requested_outputs.push_back(output.name());
    const std::string what = StrCat("output '", output.name(), "'");
    ASSIGN_OR_RETURN(std::optional<SharedMemoryParameters> parameters,
                     SharedMemoryOf(output.parameters(), what));
    if (!parameters) continue;
    if (shared_memory == nullptr || shared_memory_outputs == nullptr) return SharedMemoryOff(what);
    ASSIGN_OR_RETURN(SharedMemorySlice slice, shared_memory->Slice(*parameters, what));
    shared_memory_outputs->Add(output.name(), std::move(slice));
  }
  return decoded;
}

void EncodeGrpcInferResponse(std::string_view model_name, int64_t version, std::string_view id,
                             const InferResponse& response, inference::ModelInferResponse* out,
                             const SharedMemoryOutputs* shared_memory) {
  out->set_model_name(std::string(model_name));
  out->set_model_version(std::to_string(version));
  out->set_id(std::string(id));
  for (const NamedTensor& output : response.outputs) {
    inference::ModelInferResponse::InferOutputTensor* tensor = out->add_outputs();
    tensor->set_name(output.name);
    tensor->set_datatype(std::string(DataTypeName(output.tensor.type())));
    for (int64_t dim : output.tensor.shape()) tensor->add_shape(dim);
    const SharedMemorySlice* slice =
        shared_memory != nullptr ? shared_memory->Find(output.name) : nullptr;
    if (slice != nullptr) {
      auto& parameters = *tensor->mutable_parameters();
      parameters["shared_memory_region"].set_string_param(slice->region->info().name);
      parameters["shared_memory_byte_size"].set_int64_param(
          static_cast<int64_t>(output.tensor.byte_size()));
      out->add_raw_output_contents();
      continue;
    }
    out->add_raw_output_contents()->assign(reinterpret_cast<const char*>(output.tensor.data()),
                                           output.tensor.byte_size());
  }
}

absl::StatusOr<std::optional<int64_t>> ParseGrpcVersion(std::string_view version) {
  if (version.empty()) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), value);
  if (ec != std::errc() || end != version.data() + version.size() || value < 0) {
    return absl::InvalidArgumentError(
        StrCat("model version '", version, "' is not a version number"));
  }
  return value;
}

}  // namespace inferd
