#include "backends/onnx/onnx_backend.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "backends/onnx/onnx_dtype.h"
#include "backends/onnx/onnx_options.h"
#include "backends/onnx/onnx_signature.h"
#include "backends/onnx/ort_api.h"
#include "common/cores.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {

struct OnnxBackend::Engine {
  ort::Ptr<OrtEnv> env;
  ort::Ptr<OrtMemoryInfo> cpu_memory;
  absl::Status status;  // why the engine cannot be used, if it cannot
};

namespace {

// ORT's own log lines (warnings and worse) go through inferd's log, so they carry its format.
void ForwardOrtLog(void*, OrtLoggingLevel severity, const char* category, const char*, const char*,
                   const char* message) {
  const std::string line = StrCat("onnxruntime [", category, "]: ", message);
  if (severity >= ORT_LOGGING_LEVEL_WARNING) {
    LogWarning(line);
  } else {
    LogInfo(line);
  }
}

GraphOptimizationLevel ToOrtLevel(GraphOptimization level) {
  switch (level) {
    case GraphOptimization::kDisabled:
      return ORT_DISABLE_ALL;
    case GraphOptimization::kBasic:
      return ORT_ENABLE_BASIC;
    case GraphOptimization::kExtended:
      return ORT_ENABLE_EXTENDED;
    case GraphOptimization::kAll:
      return ORT_ENABLE_ALL;
  }
  return ORT_ENABLE_ALL;
}

// Reads one input or output of the session: name, element type and dimensions.
absl::StatusOr<GraphTensor> ReadGraphTensor(const OrtApi& api, const OrtSession* session,
                                            size_t index, bool input, OrtAllocator* allocator) {
  GraphTensor tensor;
  char* name = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(input ? api.SessionGetInputName(session, index, allocator, &name)
                                      : api.SessionGetOutputName(session, index, allocator, &name),
                                "reading the graph's names"));
  tensor.name = ort::TakeString(allocator, name);
  OrtTypeInfo* raw_info = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(input ? api.SessionGetInputTypeInfo(session, index, &raw_info)
                                      : api.SessionGetOutputTypeInfo(session, index, &raw_info),
                                "reading the graph's types"));
  ort::Ptr<OrtTypeInfo> info(raw_info);
  ONNXType kind = ONNX_TYPE_UNKNOWN;
  RETURN_IF_ERROR(ort::ToStatus(api.GetOnnxTypeFromTypeInfo(info.get(), &kind), "type info"));
  if (kind != ONNX_TYPE_TENSOR) {
    return absl::InvalidArgumentError(StrCat("'", tensor.name, "' is not a tensor (ONNX type ",
                                             static_cast<int>(kind),
                                             "); inferd serves tensor inputs and outputs"));
  }
  const OrtTensorTypeAndShapeInfo* shape_info = nullptr;  // owned by `info`
  RETURN_IF_ERROR(
      ort::ToStatus(api.CastTypeInfoToTensorInfo(info.get(), &shape_info), "tensor info"));
  ONNXTensorElementDataType element = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  RETURN_IF_ERROR(ort::ToStatus(api.GetTensorElementType(shape_info, &element), "element type"));
  tensor.type = FromOnnxType(element);
  tensor.type_name = OnnxTypeName(element);
  size_t rank = 0;
  RETURN_IF_ERROR(ort::ToStatus(api.GetDimensionsCount(shape_info, &rank), "rank"));
  tensor.dims.resize(rank);
  RETURN_IF_ERROR(
      ort::ToStatus(api.GetDimensions(shape_info, tensor.dims.data(), rank), "dimensions"));
  for (int64_t& dim : tensor.dims) {
    if (dim < 0) dim = -1;  // symbolic ("batch") or unknown
  }
  return tensor;
}

absl::StatusOr<GraphSignature> ReadSignature(const OrtApi& api, const OrtSession* session) {
  OrtAllocator* allocator = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(api.GetAllocatorWithDefaultOptions(&allocator), "allocator"));
  GraphSignature signature;
  size_t count = 0;
  RETURN_IF_ERROR(ort::ToStatus(api.SessionGetInputCount(session, &count), "input count"));
  for (size_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(GraphTensor t, ReadGraphTensor(api, session, i, true, allocator));
    signature.inputs.push_back(std::move(t));
  }
  RETURN_IF_ERROR(ort::ToStatus(api.SessionGetOutputCount(session, &count), "output count"));
  for (size_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(GraphTensor t, ReadGraphTensor(api, session, i, false, allocator));
    signature.outputs.push_back(std::move(t));
  }
  return signature;
}

struct ModelProducer {
  std::string producer;
  std::string declared_precision;  // metadata inferd.precision, empty when absent
};

absl::StatusOr<ModelProducer> ReadProducer(const OrtApi& api, const OrtSession* session) {
  OrtAllocator* allocator = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(api.GetAllocatorWithDefaultOptions(&allocator), "allocator"));
  OrtModelMetadata* raw = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(api.SessionGetModelMetadata(session, &raw), "model metadata"));
  ort::Ptr<OrtModelMetadata> metadata(raw);
  ModelProducer result;
  char* value = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(api.ModelMetadataGetProducerName(metadata.get(), allocator, &value),
                                "producer name"));
  result.producer = ort::TakeString(allocator, value);
  value = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(api.ModelMetadataLookupCustomMetadataMap(
                                    metadata.get(), allocator, kPrecisionMetadataKey, &value),
                                "model metadata"));
  result.declared_precision = ort::TakeString(allocator, value);
  return result;
}

// One model version: a session shared by every execution instance.
class OnnxModel : public BackendModel {
 public:
  OnnxModel(const OrtApi& api, ort::Ptr<OrtSession> session, const OrtMemoryInfo* cpu_memory,
            const ModelConfig& config, std::string label, int intra_op_threads)
      : api_(api),
        session_(std::move(session)),
        cpu_memory_(cpu_memory),
        config_(config),
        label_(std::move(label)),
        intra_op_threads_(intra_op_threads) {}

  // Fixed when the session was created (ONNX Runtime cannot change it later).
  int intra_op_threads() const override { return intra_op_threads_; }

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    if (inputs.size() != config_.inputs.size()) {
      return absl::InternalError(
          StrCat(label_, ": ", inputs.size(), " inputs for ", config_.inputs.size(), " declared"));
    }
    OrtIoBinding* raw_binding = nullptr;
    RETURN_IF_ERROR(Check(api_.CreateIoBinding(session_.get(), &raw_binding)));
    ort::Ptr<OrtIoBinding> binding(raw_binding);

    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& input = inputs[i];
      OrtValue* raw_value = nullptr;
      // A view over the request's buffer: ORT reads it in place and never writes to inputs.
      RETURN_IF_ERROR(Check(api_.CreateTensorWithDataAsOrtValue(
          cpu_memory_, const_cast<std::byte*>(input.data()), input.byte_size(),
          input.shape().data(), input.shape().size(), ToOnnxType(input.type()), &raw_value)));
      ort::Ptr<OrtValue> value(raw_value);
      RETURN_IF_ERROR(
          Check(api_.BindInput(binding.get(), config_.inputs[i].name.c_str(), value.get())));
    }
    for (const TensorSpec& output : config_.outputs) {
      RETURN_IF_ERROR(
          Check(api_.BindOutputToDevice(binding.get(), output.name.c_str(), cpu_memory_)));
    }
    RETURN_IF_ERROR(Check(api_.RunWithBinding(session_.get(), nullptr, binding.get())));

    OrtAllocator* allocator = nullptr;
    RETURN_IF_ERROR(Check(api_.GetAllocatorWithDefaultOptions(&allocator)));
    OrtValue** values = nullptr;
    size_t count = 0;
    RETURN_IF_ERROR(Check(api_.GetBoundOutputValues(binding.get(), allocator, &values, &count)));
    // Take ownership of every value first, so that an error below leaks none of them.
    std::vector<std::shared_ptr<OrtValue>> owned;
    for (size_t i = 0; i < count; ++i) {
      owned.emplace_back(values[i], [](OrtValue* v) { ort::Api()->ReleaseValue(v); });
    }
    if (values != nullptr) ort::Free(allocator, values);
    if (count != config_.outputs.size()) {
      return absl::InternalError(StrCat(label_, ": ONNX Runtime returned ", count, " outputs for ",
                                        config_.outputs.size(), " bound"));
    }

    std::vector<Tensor> outputs;
    outputs.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      ASSIGN_OR_RETURN(Tensor t, WrapOutput(std::move(owned[i]), config_.outputs[i].name));
      outputs.push_back(std::move(t));
    }
    return outputs;
  }

 private:
  absl::Status Check(OrtStatus* status) const {
    return ort::ToStatus(status, StrCat(label_, ": ONNX Runtime failed"));
  }

  // The response tensor is a view of ORT's output buffer, which `value` keeps alive.
  absl::StatusOr<Tensor> WrapOutput(std::shared_ptr<OrtValue> value, const std::string& name) {
    OrtTensorTypeAndShapeInfo* raw_info = nullptr;
    RETURN_IF_ERROR(Check(api_.GetTensorTypeAndShape(value.get(), &raw_info)));
    ort::Ptr<OrtTensorTypeAndShapeInfo> info(raw_info);
    ONNXTensorElementDataType element = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    RETURN_IF_ERROR(Check(api_.GetTensorElementType(info.get(), &element)));
    std::optional<DataType> type = FromOnnxType(element);
    if (!type) {
      return absl::InvalidArgumentError(StrCat("output '", name, "' has ONNX type ",
                                               OnnxTypeName(element),
                                               ", which the protocol cannot carry"));
    }
    size_t rank = 0;
    RETURN_IF_ERROR(Check(api_.GetDimensionsCount(info.get(), &rank)));
    Shape shape(rank);
    RETURN_IF_ERROR(Check(api_.GetDimensions(info.get(), shape.data(), rank)));
    size_t elements = 0;
    RETURN_IF_ERROR(Check(api_.GetTensorShapeElementCount(info.get(), &elements)));
    void* data = nullptr;
    RETURN_IF_ERROR(Check(api_.GetTensorMutableData(value.get(), &data)));
    return Tensor::Wrap(*type, std::move(shape), data, elements * DataTypeSize(*type),
                        std::move(value));
  }

  const OrtApi& api_;
  const ort::Ptr<OrtSession> session_;
  const OrtMemoryInfo* const cpu_memory_;  // owned by the backend's engine, which outlives this
  // A copy: the session may outlive the ServedModel it was loaded for (weight sharing, a
  // reload that keeps the engine), and with it that ServedModel's config.
  const ModelConfig config_;
  const std::string label_;
  const int intra_op_threads_;
};

absl::StatusOr<ort::Ptr<OrtSessionOptions>> MakeSessionOptions(const OrtApi& api,
                                                               const OnnxModelOptions& options,
                                                               int intra_op_threads) {
  OrtSessionOptions* raw = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(api.CreateSessionOptions(&raw), "session options"));
  ort::Ptr<OrtSessionOptions> session_options(raw);
  RETURN_IF_ERROR(ort::ToStatus(api.SetIntraOpNumThreads(session_options.get(), intra_op_threads),
                                "intra-op threads"));
  RETURN_IF_ERROR(
      ort::ToStatus(api.SetInterOpNumThreads(session_options.get(), options.inter_op_threads),
                    "inter-op threads"));
  RETURN_IF_ERROR(ort::ToStatus(
      api.SetSessionExecutionMode(session_options.get(),
                                  options.inter_op_threads > 1 ? ORT_PARALLEL : ORT_SEQUENTIAL),
      "execution mode"));
  RETURN_IF_ERROR(ort::ToStatus(
      api.SetSessionGraphOptimizationLevel(session_options.get(), ToOrtLevel(options.optimization)),
      "graph optimization level"));
  RETURN_IF_ERROR(ort::ToStatus(
      api.AddSessionConfigEntry(session_options.get(), "session.intra_op.allow_spinning",
                                options.allow_spinning ? "1" : "0"),
      "allow_spinning"));
  return session_options;
}

}  // namespace

OnnxBackend::OnnxBackend(OnnxBackendOptions options)
    : options_(options),
      default_intra_op_threads_(options.intra_op_threads > 0 ? options.intra_op_threads
                                                             : CoresAvailable()),
      engine_(std::make_unique<Engine>()) {
  const OrtApi* api = ort::Api();
  if (api == nullptr) {
    engine_->status = absl::FailedPreconditionError(
        StrCat("the ONNX Runtime library is version ", ort::LibraryVersion(),
               ", older than the headers inferd was built with (API ", ORT_API_VERSION, ")"));
    return;
  }
  OrtEnv* env = nullptr;
  engine_->status =
      ort::ToStatus(api->CreateEnvWithCustomLogger(ForwardOrtLog, nullptr,
                                                   ORT_LOGGING_LEVEL_WARNING, "inferd", &env),
                    "creating the ONNX Runtime environment");
  engine_->env.reset(env);
  if (!engine_->status.ok()) return;
  OrtMemoryInfo* memory = nullptr;
  engine_->status = ort::ToStatus(
      api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memory), "CPU memory info");
  engine_->cpu_memory.reset(memory);
}

OnnxBackend::~OnnxBackend() = default;

void OnnxBackend::Prepare(const std::vector<const ModelConfig*>& configs) {
  if (options_.intra_op_threads > 0) return;
  int max_instances = 1;
  for (const ModelConfig* config : configs) {
    max_instances = std::max(max_instances, config->total_instances());
  }
  default_intra_op_threads_ = std::max(1, CoresAvailable() / max_instances);
}

std::string OnnxBackend::Describe() const {
  if (!engine_->status.ok()) return std::string(engine_->status.message());
  std::string providers;
  for (const std::string& p : ort::AvailableProviders()) {
    providers += StrCat(providers.empty() ? "" : ", ", p);
  }
  return StrCat("ONNX Runtime ", ort::LibraryVersion(), " (providers: ", providers, "), ",
                default_intra_op_threads_.load(), " intra-op thread(s) by default");
}

absl::StatusOr<ModelConfig> OnnxBackend::CompleteConfig(const ModelConfig& config,
                                                        const std::filesystem::path& version_dir) {
  const std::filesystem::path file = version_dir / model_filename();
  const std::string config_path = (version_dir.parent_path() / "config.yaml").string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return absl::NotFoundError(StrCat(file.string(), ": missing, and config.yaml gives no ",
                                      config.inputs.empty() ? "inputs" : "outputs"));
  }
  RETURN_IF_ERROR(engine_->status);
  const OrtApi& api = *ort::Api();
  // Only the signature is read: no graph optimization, one thread.
  OnnxModelOptions options;
  options.optimization = GraphOptimization::kDisabled;
  ASSIGN_OR_RETURN(ort::Ptr<OrtSessionOptions> session_options,
                   MakeSessionOptions(api, options, 1));
  OrtSession* raw_session = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(
      api.CreateSession(engine_->env.get(), file.c_str(), session_options.get(), &raw_session),
      StrCat(file.string(), ": ONNX Runtime rejected the model"),
      absl::StatusCode::kInvalidArgument));
  ort::Ptr<OrtSession> session(raw_session);
  absl::StatusOr<GraphSignature> signature = ReadSignature(api, session.get());
  if (!signature.ok()) {
    return absl::InvalidArgumentError(StrCat(file.string(), ": ", signature.status().message()));
  }
  return CompleteConfigFromGraph(config, *signature, config_path);
}

absl::StatusOr<std::unique_ptr<BackendModel>> OnnxBackend::Load(const BackendLoadRequest& request) {
  const ModelConfig& config = *request.config;
  const std::filesystem::path file = request.version_dir / model_filename();
  const std::string config_path = (request.version_dir.parent_path() / "config.yaml").string();
  ASSIGN_OR_RETURN(OnnxModelOptions options, ParseOnnxModelOptions(config, config_path));
  RETURN_IF_ERROR(engine_->status);
  RETURN_IF_ERROR(CheckExecutionProvider(options, ort::AvailableProviders(), ort::LibraryVersion(),
                                         config_path));
  RETURN_IF_ERROR(CheckOnnxPrecisionAndDevices(config, config_path));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return absl::NotFoundError(StrCat(file.string(),
                                      ": missing (an ONNX file, written by torch.onnx.export "
                                      "or python -m tools.optimize.export)"));
  }
  const OrtApi& api = *ort::Api();

  const int threads =
      options.intra_op_threads > 0 ? options.intra_op_threads : default_intra_op_threads_.load();
  ASSIGN_OR_RETURN(ort::Ptr<OrtSessionOptions> session_options,
                   MakeSessionOptions(api, options, threads));
  OrtSession* raw_session = nullptr;
  RETURN_IF_ERROR(ort::ToStatus(
      api.CreateSession(engine_->env.get(), file.c_str(), session_options.get(), &raw_session),
      StrCat(file.string(), ": ONNX Runtime rejected the model"),
      absl::StatusCode::kInvalidArgument));
  ort::Ptr<OrtSession> session(raw_session);

  absl::StatusOr<GraphSignature> signature = ReadSignature(api, session.get());
  if (!signature.ok()) {
    return absl::InvalidArgumentError(StrCat(file.string(), ": ", signature.status().message()));
  }
  RETURN_IF_ERROR(CheckGraphSignature(config, *signature, config_path));
  ASSIGN_OR_RETURN(ModelProducer producer, ReadProducer(api, session.get()));
  RETURN_IF_ERROR(
      CheckQuantizedModel(config, producer.producer, producer.declared_precision, file.string()));
  return std::make_unique<OnnxModel>(
      api, std::move(session), engine_->cpu_memory.get(), config,
      StrCat(config.name, ":", request.version_dir.filename().string()), threads);
}

}  // namespace inferd
