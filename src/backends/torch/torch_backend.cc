#include "backends/torch/torch_backend.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/frozen_graph_optimizations.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/script.h>

#include "backends/torch/torch_cuda.h"
#include "backends/torch/torch_dtype.h"
#include "backends/torch/torch_precision.h"
#include "common/adaptive_threads.h"
#include "common/cores.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/openmp_team.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/types/bytes_tensor.h"

namespace inferd {
namespace {

struct TorchModelOptions {
  bool freeze = true;
  bool optimize_for_inference = false;
  int intra_op_threads = 0;  // 0: the backend's default
};

absl::StatusOr<bool> ParseBool(const std::string& value, std::string_view field,
                               const std::string& config_path) {
  if (value == "true") return true;
  if (value == "false") return false;
  return absl::InvalidArgumentError(
      StrCat(config_path, ": ", field, ": must be true or false, got '", value, "'"));
}

absl::StatusOr<TorchModelOptions> ParseOptions(const ModelConfig& config,
                                               const std::string& config_path) {
  TorchModelOptions options;
  for (const auto& [key, value] : config.parameters) {
    const std::string field = StrCat("parameters.", key);
    if (key == "freeze") {
      ASSIGN_OR_RETURN(options.freeze, ParseBool(value, field, config_path));
    } else if (key == "optimize_for_inference") {
      ASSIGN_OR_RETURN(options.optimize_for_inference, ParseBool(value, field, config_path));
    } else if (key == "intra_op_threads") {
      int threads = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), threads);
      if (ec != std::errc() || end != value.data() + value.size() || threads < 1 ||
          threads > 1024) {
        return absl::InvalidArgumentError(StrCat(
            config_path, ": ", field, ": must be a thread count in 1..1024, got '", value, "'"));
      }
      options.intra_op_threads = threads;
    } else {
      return absl::InvalidArgumentError(StrCat(config_path, ": ", field,
                                               ": unknown parameter for backend 'torch' (known: "
                                               "freeze, optimize_for_inference, "
                                               "intra_op_threads)"));
    }
  }
  return options;
}

// The CUDA stream of the calling execution instance on `device`: each instance thread takes
// its own from LibTorch's pool on first use, so instances of one model overlap their copies
// and kernels instead of serialising on the default stream.
c10::Stream InstanceStream(c10::Device device) {
  thread_local std::vector<std::optional<c10::Stream>> streams;
  const size_t index = static_cast<size_t>(device.index());
  if (streams.size() <= index) streams.resize(index + 1);
  if (!streams[index]) {
    streams[index] = c10::impl::VirtualGuardImpl(device.type()).getStreamFromGlobalPool(device);
  }
  return *streams[index];
}

// Sets the calling thread's intra-op thread count if it differs from what this thread last
// used. at::set_num_threads sets the calling thread's OpenMP and MKL thread counts (and the
// value threads that have not run LibTorch yet start from); every execution instance is its
// own thread, so each model's instances keep their own count. Every model applies its count,
// default included, so that one model's setting never leaks into another's threads.
void UseIntraOpThreads(int threads) {
  thread_local int applied = 0;
  if (threads == applied) return;
  at::set_num_threads(threads);
  applied = threads;
}

// A TorchScript module shared by every execution instance of one model version, on one
// device.
class TorchModel : public BackendModel {
 public:
  // `intra_op_threads_fixed`: the config or --intra-op-threads set the count, so the batch
  // tuner may not change it.
  TorchModel(torch::jit::Module module, const ModelConfig& config, std::string label,
             c10::Device device, uint64_t weight_bytes, int intra_op_threads,
             bool intra_op_threads_fixed)
      : module_(std::move(module)),
        config_(config),
        label_(std::move(label)),
        device_(device),
        weight_bytes_(weight_bytes),
        intra_op_threads_(intra_op_threads),
        intra_op_threads_fixed_(intra_op_threads_fixed) {}

  ~TorchModel() override {
    if (device_.is_cuda()) {
      // Weights freed first, then the allocator's cache, so the device memory really
      // returns (the caching allocator otherwise keeps it for the next model).
      module_ = torch::jit::Module();
      ReleaseCachedCudaMemory();
    }
  }

  uint64_t memory_bytes() const override { return weight_bytes_; }

  // One thread against the default: small models often run faster single-threaded (fewer
  // hand-offs between threads, and the other cores stay free for I/O and other models).
  std::vector<int> IntraOpThreadChoices() const override {
    const int current = intra_op_threads_.load();
    if (intra_op_threads_fixed_ || device_.is_cuda() || current <= 1) return {};
    return {current, 1};
  }

  void SetIntraOpThreads(int threads) override { intra_op_threads_ = threads; }
  void AdaptIntraOpThreads() override {
    const int most = intra_op_threads_.load();
    if (intra_op_threads_fixed_ || device_.is_cuda() || most <= 1) return;
    MutexLock lock(&adapt_mu_);
    adaptive_.emplace(most, /*adaptive=*/true);
    last_threads_ = most;
    adapting_ = true;
  }
  // LibTorch's intra-op threads are the calling thread's OpenMP team.
  void ReleaseCallerThreads() override { ReleaseOpenMpTeam(); }
  // While adapting: the count the last run used.
  int intra_op_threads() const override {
    if (device_.is_cuda()) return 0;
    return adapting_.load() ? last_threads_.load() : intra_op_threads_.load();
  }

  absl::StatusOr<std::vector<Tensor>> Execute(std::span<const Tensor> inputs) override {
    try {
      return ExecuteOrThrow(inputs);
    } catch (const c10::Error& e) {
      return absl::InternalError(StrCat(label_, ": LibTorch failed: ", e.what_without_backtrace()));
    } catch (const std::exception& e) {
      return absl::InternalError(StrCat(label_, ": LibTorch failed: ", e.what()));
    }
  }

 private:
  // The count for this run: the fixed one, or the adaptive chooser's.
  int RunThreads() {
    if (!adapting_.load(std::memory_order_relaxed)) {
      return intra_op_threads_.load(std::memory_order_relaxed);
    }
    MutexLock lock(&adapt_mu_);
    const int threads = adaptive_->Next();
    last_threads_.store(threads, std::memory_order_relaxed);
    return threads;
  }

  // Tells the chooser how long the forward pass of `rows` rows took on `threads` threads.
  // With several execution instances, runs of different counts overlap and a probe may be
  // judged by another instance's run of the same count: the times stay true per count.
  // Time per row is compared across batch sizes: under steady load the batches are alike;
  // a probe that happens to run a smaller batch than usual looks slower per row than it is,
  // so the chooser leans to the count it has, and the next probe asks again.
  void RecordRun(int threads, std::chrono::steady_clock::time_point start, int64_t rows) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MutexLock lock(&adapt_mu_);
    adaptive_->Record(threads, seconds, static_cast<int>(std::max<int64_t>(rows, 1)));
  }

  absl::StatusOr<std::vector<Tensor>> ExecuteOrThrow(std::span<const Tensor> inputs) {
    const int threads = RunThreads();
    UseIntraOpThreads(threads);
    c10::InferenceMode inference_mode;
    std::optional<c10::StreamGuard> stream_guard;
    if (device_.is_cuda()) stream_guard.emplace(InstanceStream(device_));
    std::vector<c10::IValue> args;
    args.reserve(inputs.size());
    for (const Tensor& input : inputs) {
      if (input.type() == DataType::kBytes) {
        // TorchScript has no string tensors: a BYTES input arrives as List[str] holding the
        // elements in row-major order (a batch of B rows of one string is B strings).
        c10::List<std::string> strings;
        for (std::string_view element : BytesElements(input)) strings.emplace_back(element);
        args.emplace_back(std::move(strings));
        continue;
      }
      // A zero-copy view; the deleter holds the buffer's owner so that an output aliasing
      // an input (an identity model) stays valid after the request releases its inputs.
      std::shared_ptr<const void> owner = input.owner();
      at::Tensor host =
          ToModelInput(at::from_blob(
                           const_cast<std::byte*>(input.data()), input.shape(),
                           [owner = std::move(owner)](void*) mutable { owner.reset(); },
                           at::TensorOptions().dtype(ToTorchType(input.type()))),
                       config_.precision);
      if (device_.is_cuda()) {
        // Staged through pinned memory so the upload is a DMA that runs asynchronously on
        // this instance's stream, overlapping the other inputs' staging.
        host = host.pin_memory().to(device_, /*non_blocking=*/true);
      }
      args.emplace_back(std::move(host));
    }
    const auto start = std::chrono::steady_clock::now();
    c10::IValue result = module_.forward(std::move(args));
    if (adapting_.load(std::memory_order_relaxed)) {
      RecordRun(threads, start, config_.batched() && !inputs.empty() ? inputs[0].shape()[0] : 1);
    }

    std::vector<at::Tensor> tensors;
    if (result.isTensor()) {
      tensors.push_back(result.toTensor());
    } else if (result.isTuple()) {
      for (const c10::IValue& element : result.toTupleRef().elements()) {
        if (!element.isTensor()) return NotATensor(element);
        tensors.push_back(element.toTensor());
      }
    } else if (result.isTensorList()) {
      for (const at::Tensor& t : result.toTensorVector()) tensors.push_back(t);
    } else {
      return NotATensor(result);
    }
    if (tensors.size() != config_.outputs.size()) {
      return absl::InvalidArgumentError(StrCat("the model returns ", tensors.size(),
                                               " tensors but config.yaml declares ",
                                               config_.outputs.size(), " outputs"));
    }

    if (device_.is_cuda()) {
      // One download per output per batch, all queued before a single wait.
      for (at::Tensor& t : tensors) {
        at::Tensor host =
            at::empty(t.sizes(), t.options().device(at::kCPU).pinned_memory(true).memory_format(
                                     at::MemoryFormat::Contiguous));
        host.copy_(t, /*non_blocking=*/true);
        t = std::move(host);
      }
      stream_guard->current_stream().synchronize();
    }

    std::vector<Tensor> outputs;
    outputs.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      at::Tensor t = ToDeclaredOutput(tensors[i], config_.outputs[i].datatype).contiguous();
      std::optional<DataType> type = FromTorchType(t.scalar_type());
      if (!type) {
        return absl::InvalidArgumentError(
            StrCat("output '", config_.outputs[i].name, "' has LibTorch type ",
                   c10::toString(t.scalar_type()), ", which the protocol cannot carry"));
      }
      Shape shape(t.sizes().begin(), t.sizes().end());
      void* data = t.data_ptr();
      const size_t bytes = t.nbytes();
      outputs.push_back(Tensor::Wrap(*type, std::move(shape), data, bytes,
                                     std::make_shared<at::Tensor>(std::move(t))));
    }
    return outputs;
  }

  absl::Status NotATensor(const c10::IValue& value) const {
    return absl::InvalidArgumentError(StrCat(
        "the model returns a ", value.tagKind(),
        "; inferd serves models whose forward returns a tensor or a tuple or list of tensors"));
  }

  torch::jit::Module module_;
  // A copy: the weights may be shared by several model versions with their own configs.
  const ModelConfig config_;
  const std::string label_;
  const c10::Device device_;
  const uint64_t weight_bytes_;
  std::atomic<int> intra_op_threads_;  // set by the batch tuner before instances start
  const bool intra_op_threads_fixed_;
  // Set at load by AdaptIntraOpThreads: each run's count comes from `adaptive_`.
  std::atomic<bool> adapting_{false};
  std::atomic<int> last_threads_{0};
  Mutex adapt_mu_;
  std::optional<AdaptiveThreads> adaptive_ ABSL_GUARDED_BY(adapt_mu_);
};

// Parameters and buffers, counted before freezing turns them into graph constants.
uint64_t WeightBytes(const torch::jit::Module& module) {
  uint64_t bytes = 0;
  for (const at::Tensor& t : module.parameters(/*recurse=*/true)) bytes += t.nbytes();
  for (const at::Tensor& t : module.buffers(/*recurse=*/true)) bytes += t.nbytes();
  return bytes;
}

// The forward method's parameter names, without `self`.
std::vector<std::string> ForwardArguments(const torch::jit::Module& module) {
  std::vector<std::string> names;
  const auto& arguments = module.get_method("forward").function().getSchema().arguments();
  for (size_t i = 1; i < arguments.size(); ++i) names.push_back(arguments[i].name());
  return names;
}

absl::StatusOr<torch::jit::Module> LoadModule(const std::filesystem::path& file,
                                              const TorchModelOptions& options,
                                              const ModelConfig& config,
                                              const std::string& config_path, c10::Device device,
                                              uint64_t* weight_bytes) {
  // Loaded straight onto its device: the weights never take host memory as well.
  torch::jit::Module module = torch::jit::load(file.string(), device);
  module.eval();
  *weight_bytes = WeightBytes(module);
  if (!module.find_method("forward")) {
    return absl::InvalidArgumentError(StrCat(file.string(), ": has no forward method"));
  }
  const std::vector<std::string> arguments = ForwardArguments(module);
  if (arguments.size() != config.inputs.size()) {
    return absl::InvalidArgumentError(
        StrCat(config_path, ": inputs: the model's forward takes ", arguments.size(), " inputs (",
               StrJoin(arguments, ", "), ") but config.yaml declares ", config.inputs.size()));
  }
  RETURN_IF_ERROR(CheckTorchPrecision(config, module, file.string(), config_path, device));
  if (std::optional<at::ScalarType> serving = ServingFloatType(config.precision)) {
    module.to(*serving);
  }
  if (options.freeze) {
    try {
      module = torch::jit::freeze(module);
    } catch (const c10::Error& e) {
      LogWarning(StrCat("model ", config.name, ": serving unfrozen; torch.jit.freeze failed: ",
                        e.what_without_backtrace()));
    }
  }
  if (options.optimize_for_inference) module = torch::jit::optimize_for_inference(module);
  return module;
}

}  // namespace

TorchBackend::TorchBackend(TorchBackendOptions options)
    : options_(options),
      default_intra_op_threads_(options_.intra_op_threads > 0 ? options_.intra_op_threads
                                                              : CoresAvailable()) {
  at::set_num_threads(default_intra_op_threads_.load());
}

void TorchBackend::Prepare(const std::vector<const ModelConfig*>& configs) {
  if (options_.intra_op_threads > 0) return;
  int max_instances = 1;
  for (const ModelConfig* config : configs) {
    max_instances = std::max(max_instances, config->total_instances());
  }
  default_intra_op_threads_ = std::max(1, CoresAvailable() / max_instances);
  at::set_num_threads(default_intra_op_threads_.load());
}

int TorchBackend::intra_op_threads() const { return default_intra_op_threads_.load(); }

absl::StatusOr<ModelConfig> TorchBackend::CompleteConfig(const ModelConfig& config,
                                                         const std::filesystem::path& version_dir) {
  const std::filesystem::path file = version_dir / model_filename();
  const std::string config_path = (version_dir.parent_path() / "config.yaml").string();
  std::vector<std::string> arguments;
  size_t returns = 1;
  try {
    torch::jit::Module module = torch::jit::load(file.string(), c10::Device(c10::kCPU));
    if (module.find_method("forward")) {
      arguments = ForwardArguments(module);
      const auto& schema = module.get_method("forward").function().getSchema();
      if (!schema.returns().empty()) {
        if (auto tuple = schema.returns()[0].type()->cast<c10::TupleType>()) {
          returns = tuple->elements().size();
        }
      }
    }
  } catch (const c10::Error& e) {
    return absl::InvalidArgumentError(
        StrCat(file.string(), ": not a loadable TorchScript file: ", e.what_without_backtrace()));
  }
  std::vector<std::string> inputs, outputs;
  for (const std::string& argument : arguments) {
    inputs.push_back(StrCat("{name: ", argument, ", datatype: FP32, dims: [...]}"));
  }
  for (size_t i = 0; i < returns; ++i) {
    outputs.push_back(StrCat("{name: output", i, ", datatype: FP32, dims: [...]}"));
  }
  std::vector<std::string> add;
  if (config.inputs.empty()) add.push_back(StrCat("inputs: [", StrJoin(inputs, ", "), "]"));
  if (config.outputs.empty()) add.push_back(StrCat("outputs: [", StrJoin(outputs, ", "), "]"));
  return absl::InvalidArgumentError(
      StrCat(config_path, ": ", config.inputs.empty() ? "inputs" : "outputs",
             ": is required for a TorchScript model: ", file.filename().string(),
             "'s forward takes (", StrJoin(arguments, ", "), ") and returns ", returns,
             " tensor(s), but the file records no datatypes or shapes; add to config.yaml ",
             StrJoin(add, " and "),
             " with each tensor's datatype and dims (without the batch "
             "dimension when max_batch_size > 0)"));
}

absl::StatusOr<std::unique_ptr<BackendModel>> TorchBackend::Load(
    const BackendLoadRequest& request) {
  const ModelConfig& config = *request.config;
  const std::filesystem::path file = request.version_dir / model_filename();
  const std::string config_path = (request.version_dir.parent_path() / "config.yaml").string();
  ASSIGN_OR_RETURN(TorchModelOptions options, ParseOptions(config, config_path));
  ASSIGN_OR_RETURN(const Device device, ParseDevice(request.device));
  if (absl::Status usable = CheckCudaDevice(device); !usable.ok()) {
    return absl::Status(usable.code(),
                        StrCat(config_path, ": instances.device: ", usable.message()));
  }
  const c10::Device torch_device =
      device.is_cuda() ? c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device.index))
                       : c10::Device(c10::kCPU);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return absl::NotFoundError(StrCat(file.string(),
                                      ": missing (a TorchScript file, "
                                      "written by torch.jit.save)"));
  }
  try {
    uint64_t weight_bytes = 0;
    ASSIGN_OR_RETURN(torch::jit::Module module,
                     LoadModule(file, options, config, config_path, torch_device, &weight_bytes));
    return std::make_unique<TorchModel>(
        std::move(module), config,
        StrCat(config.name, ":", request.version_dir.filename().string()), torch_device,
        weight_bytes, options.intra_op_threads > 0 ? options.intra_op_threads : intra_op_threads(),
        /*intra_op_threads_fixed=*/options.intra_op_threads > 0 || options_.intra_op_threads > 0);
  } catch (const c10::Error& e) {
    return absl::InvalidArgumentError(
        StrCat(file.string(), ": not a loadable TorchScript file: ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        StrCat(file.string(), ": not a loadable TorchScript file: ", e.what()));
  }
}

}  // namespace inferd
