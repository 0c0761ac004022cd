#include "core/repository/model_loader.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cores.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/backend/config_completer.h"
#include "core/backend/generation.h"
#include "core/scheduling/batch_tuner.h"
#include "core/scheduling/intra_op_probe.h"

namespace inferd {
namespace {

bool ShapeMatches(const Shape& declared, const Shape& actual) {
  if (declared.size() != actual.size()) return false;
  for (size_t i = 0; i < declared.size(); ++i) {
    if (declared[i] != -1 && declared[i] != actual[i]) return false;
  }
  return true;
}

void AppendTensors(const ModelConfig& config, const std::vector<TensorSpec>& specs,
                   std::string& text) {
  for (size_t i = 0; i < specs.size(); ++i) {
    text += StrCat(i ? ", " : "", specs[i].name, " ", DataTypeName(specs[i].datatype),
                   ShapeToString(config.FullShape(specs[i])));
  }
}

// "inputs x FP32[-1,4]; outputs y FP32[-1,2]; max_batch_size 8", for the log.
std::string DescribeSignature(const ModelConfig& config) {
  std::string text = "inputs ";
  AppendTensors(config, config.inputs, text);
  text += "; outputs ";
  AppendTensors(config, config.outputs, text);
  text += StrCat("; max_batch_size ", config.max_batch_size);
  if (config.dynamic_batching.auto_tune) text += ", dynamic batching with auto-tuned sizes";
  return text;
}

// What config.yaml left out, read from the model file by a backend that can (Triton's
// auto-complete); an error naming config.yaml for one that cannot.
absl::StatusOr<ModelConfig> CompleteFromModelFile(Backend& backend, const ModelConfig& config,
                                                  const std::filesystem::path& version_dir) {
  auto* completer = dynamic_cast<ConfigCompleter*>(&backend);
  if (completer == nullptr) {
    return absl::InvalidArgumentError(
        StrCat((version_dir.parent_path() / "config.yaml").string(), ": ",
               config.inputs.empty() ? "inputs" : "outputs", ": is required: the '", backend.name(),
               "' backend cannot read the signature from ", backend.model_filename(),
               " (list each tensor with name, datatype and dims)"));
  }
  ASSIGN_OR_RETURN(ModelConfig completed, completer->CompleteConfig(config, version_dir));
  LogInfo(StrCat("model ", completed.name, ": signature read from ",
                 (version_dir / backend.model_filename()).string(), ": ",
                 DescribeSignature(completed)));
  return completed;
}

// The intra-op thread count, for a model the tuner did not already time with each count.
absl::StatusOr<IntraOpChoice> ChooseThreads(const ModelConfig& config, BackendModel& model,
                                            const std::optional<BatchTuning>& tuning,
                                            bool weights_shared,
                                            const std::filesystem::path& version_dir) {
  if (dynamic_cast<GenerativeModel*>(&model) != nullptr) {
    return IntraOpChoice{
        .threads = 0, .reason = "a language model: its engine sets its own threads", .probe = {}};
  }
  if (tuning.has_value() && tuning->intra_op_threads > 0) {
    return IntraOpChoice{.threads = tuning->intra_op_threads,
                         .reason = "auto_tune timed the chosen batch size with each count",
                         .probe = {}};
  }
  if (weights_shared) {
    return IntraOpChoice{.threads = model.intra_op_threads(),
                         .reason = "as chosen when another version loaded the same file",
                         .probe = {}};
  }
  absl::StatusOr<IntraOpChoice> choice =
      ChooseIntraOpThreads(config, model, *RealTime(), CoresAvailable());
  if (!choice.ok()) {
    return absl::Status(choice.status().code(),
                        StrCat(version_dir.string(),
                               ": timing intra-op threads failed: ", choice.status().message()));
  }
  return choice;
}

// "dynamic batching up to 32 rows, no queue delay (the default for max_batch_size > 0)".
std::string DescribeBatching(const ModelConfig& config, const BatchPolicy& policy) {
  if (!policy.dynamic) {
    return config.batched() ? "batching off (dynamic_batching: {enabled: false})"
                            : "no batch dimension: each request runs alone";
  }
  return StrCat(
      "dynamic batching up to ", policy.max_rows, " rows, ",
      policy.max_queue_delay.count() == 0
          ? std::string("no queue delay")
          : StrCat(std::chrono::duration_cast<std::chrono::microseconds>(policy.max_queue_delay)
                       .count(),
                   " us queue delay"),
      config.dynamic_batching.by_default
          ? " (the default for max_batch_size > 0; a dynamic_batching section overrides it)"
          : " (config.yaml's dynamic_batching)");
}

}  // namespace

absl::Status WarmUpAndCheckOutputs(const ModelConfig& config, BackendModel& model) {
  ASSIGN_OR_RETURN(const std::vector<Tensor> inputs, config.ExampleInputs(1));
  absl::StatusOr<std::vector<Tensor>> outputs = model.Execute(inputs);
  if (!outputs.ok()) {
    return absl::Status(outputs.status().code(),
                        StrCat("warm-up run on zero inputs (batch 1, variable dimensions "
                               "1) failed: ",
                               outputs.status().message()));
  }
  if (outputs->size() != config.outputs.size()) {
    return absl::InvalidArgumentError(StrCat("outputs: the model returns ", outputs->size(),
                                             " tensors, config.yaml declares ",
                                             config.outputs.size()));
  }
  for (size_t i = 0; i < config.outputs.size(); ++i) {
    const TensorSpec& spec = config.outputs[i];
    const Tensor& out = (*outputs)[i];
    if (out.type() != spec.datatype) {
      return absl::InvalidArgumentError(StrCat("outputs[", i, "].datatype: the model returns ",
                                               DataTypeName(out.type()), " for output '", spec.name,
                                               "', not ", DataTypeName(spec.datatype)));
    }
    Shape declared = config.FullShape(spec);
    if (config.batched()) declared[0] = 1;
    if (!ShapeMatches(declared, out.shape())) {
      return absl::InvalidArgumentError(
          StrCat("outputs[", i, "].dims: for a batch of 1 the model returns shape ",
                 ShapeToString(out.shape()), " for output '", spec.name, "', which does not match ",
                 ShapeToString(declared)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ServedModel>> LoadModelVersion(
    Backend& backend, std::shared_ptr<const ModelConfig> config,
    const std::filesystem::path& model_dir, int64_t version,
    std::shared_ptr<BackendModel> shared_weights, std::shared_ptr<ModelObserver> observer) {
  BackendLoadRequest request;
  request.version_dir = model_dir / std::to_string(version);
  if (config->inputs.empty() || config->outputs.empty()) {
    ASSIGN_OR_RETURN(ModelConfig completed,
                     CompleteFromModelFile(backend, *config, request.version_dir));
    config = std::make_shared<const ModelConfig>(std::move(completed));
  }
  request.config = config.get();
  request.device = config->instances.front().device;
  const bool weights_shared = shared_weights != nullptr;
  std::shared_ptr<BackendModel> model = std::move(shared_weights);
  if (model == nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<BackendModel> loaded, backend.Load(request));
    model = std::move(loaded);
  }
  // A language model has no fixed-shape run to warm up: its engine allocates its buffers
  // when its context is created, and a generation of zero inputs means nothing.
  // A pipeline's run would submit to its step models (loading them): it has nothing of its
  // own to warm up.
  if (dynamic_cast<GenerativeModel*>(model.get()) == nullptr && !config->capabilities.pipeline) {
    if (absl::Status warm = WarmUpAndCheckOutputs(*config, *model); !warm.ok()) {
      // Mismatches are config errors; name the file the user has to fix.
      const std::filesystem::path where = warm.code() == absl::StatusCode::kInvalidArgument
                                              ? model_dir / "config.yaml"
                                              : request.version_dir;
      return absl::Status(warm.code(), StrCat(where.string(), ": ", warm.message()));
    }
    // TorchScript's profiling executor records shapes on the first run and optimizes the
    // graph on the second: without this run the first real request paid for it (resnet18:
    // ~1-3 s on 2 cores, bench/results/*-lifecycle.md), after the model had been published.
    if (absl::Status again = WarmUpAndCheckOutputs(*config, *model); !again.ok()) {
      return absl::Status(again.code(), StrCat(request.version_dir.string(),
                                               ": second warm-up run failed: ", again.message()));
    }
  }
  BatchPolicy policy = PolicyFromConfig(*config);
  std::optional<BatchTuning> tuning;
  if (config->dynamic_batching.auto_tune) {
    absl::StatusOr<BatchTuning> tuned = TuneBatchSize(*config, *model, *RealTime());
    if (!tuned.ok()) {
      return absl::Status(tuned.status().code(),
                          StrCat(request.version_dir.string(),
                                 ": batch size tuning failed: ", tuned.status().message()));
    }
    LogInfo(StrCat("model ", config->name, ": batch sizes measured (SLO ", tuned->latency_slo_ms,
                   " ms):\n", DescribeTuning(*tuned)));
    policy = ApplyTuning(std::move(policy), *tuned);
    tuning = *std::move(tuned);
  }
  ASSIGN_OR_RETURN(IntraOpChoice intra_op,
                   ChooseThreads(*config, *model, tuning, weights_shared, request.version_dir));
  LogInfo(StrCat("model ", config->name, ": ", DescribeBatching(*config, policy),
                 "; intra-op threads ", DescribeIntraOpChoice(intra_op)));
  // The instances run the model from here on, on threads of their own.
  model->ReleaseCallerThreads();
  return std::make_unique<ServedModel>(std::move(config), version, backend.platform(),
                                       std::move(model), std::move(policy), std::move(tuning),
                                       std::move(intra_op), std::move(observer));
}

}  // namespace inferd
