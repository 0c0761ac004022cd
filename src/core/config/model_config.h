// A model's config.yaml: what the user declares about a model, parsed and validated strictly.
//
// Every error names the file and the field (for example
// "models/mlp/config.yaml: inputs[0].datatype: 'FP33' is not a datatype"), because a user
// with twenty models needs to know which line to fix.
#ifndef INFERD_CORE_CONFIG_MODEL_CONFIG_H_
#define INFERD_CORE_CONFIG_MODEL_CONFIG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/adapter_config.h"
#include "core/config/lifecycle_config.h"
#include "core/types/data_type.h"
#include "core/types/precision.h"
#include "core/types/tensor.h"

namespace inferd {

struct PipelineSpec;  // core/config/pipeline_spec.h

// What a BYTES input holds, for a pipeline's front doors (`content:` in config.yaml): an
// encoded image or UTF-8 text. kNone for every other tensor.
enum class TensorContent { kNone, kImage, kText };

// One input or output as the model declares it. With batching, `dims` excludes the batch
// dimension. -1 marks a variable dimension.
struct TensorSpec {
  std::string name;
  DataType datatype = DataType::kFp32;
  Shape dims;
  TensorContent content = TensorContent::kNone;
};

struct InstanceGroup {
  int count = 1;
  std::string device = "cpu";
};

// `dynamic_batching:` (present = enabled). Requests queued for the model are merged into
// batches of up to max_batch_size rows.
//
// A model with max_batch_size > 0 and no `dynamic_batching:` section batches too, with every
// default: no queue delay, so a lone request runs at once and, under load, each batch takes
// whatever has queued behind the running one (up to max_batch_size); the batch size follows
// the load. `dynamic_batching: {enabled: false}` turns it off. Why the default: the plain
// config a newcomer writes served mlp_scorer at about half the speed of the tuned one
// (issue 16).
struct DynamicBatchingConfig {
  bool enabled = false;
  // Enabled by the rule above, not by config.yaml (reported as the batching's "source").
  bool by_default = false;
  // How long the oldest queued request may wait for others to join its batch.
  int64_t max_queue_delay_us = 0;
  // Batch sizes the batcher aims for (dispatching as soon as the largest is reachable).
  std::vector<int> preferred_batch_sizes;
  // Answer requests in arrival order even when several instances finish out of order.
  bool preserve_ordering = false;
  // Measure throughput per batch size at load and pick the sizes (see BatchTuner).
  bool auto_tune = false;
  double latency_slo_ms = 100;
};

// `queue:` how requests wait: priorities, deadlines and a bound on the queue.
struct QueueConfig {
  int priority_levels = 1;
  int default_priority_level = 0;  // 0: the lowest level (priority_levels)
  int64_t max_queue_size = 0;      // 0: unbounded; else a full queue is ResourceExhausted
  int64_t default_timeout_us = 0;  // 0: no deadline unless the request sets one
  // What an expired request gets: DeadlineExceeded, or ResourceExhausted ("overloaded, retry
  // later"). config.yaml spells them as the HTTP statuses users see: timeout_status 504 / 429.
  absl::StatusCode timeout_code = absl::StatusCode::kDeadlineExceeded;
  // How long an idle instance watches this queue before it sleeps (common/busy_poll.h).
  int64_t busy_poll_us = 0;

  int default_priority() const {
    return default_priority_level > 0 ? default_priority_level : priority_levels;
  }
};

// `response_cache:` answers repeated identical requests from memory (core/model/response_cache.h).
// Absent: no cache.
struct ResponseCacheConfig {
  uint64_t max_bytes = 0;  // 0: no cache
  // Each tenant has its own entries (the default): whether another tenant sent the same
  // input must not show in a faster answer. false: one cache for every caller.
  bool per_tenant = true;

  bool enabled() const { return max_bytes > 0; }
};
inline constexpr int64_t kMinResponseCacheBytes = int64_t{64} << 10;  // 64 KiB
inline constexpr int64_t kMaxResponseCacheBytes = int64_t{64} << 30;  // 64 GiB

// Defaults for fields a config.yaml leaves out, from the environment (BATCH_SIZE,
// MAX_WORKERS, as the seed deploys them) and flags; a config's own values always win.
struct ConfigDefaults {
  int max_batch_size = 0;
  int instance_count = 1;
  int64_t busy_poll_us = 0;  // --busy-poll-us
};

// What a model can do besides taking tensors in and giving tensors out: set from its backend
// where the config is parsed (the one place that knows which backends generate), read by
// every frontend and by the inference path instead of comparing backend names.
struct ModelCapabilities {
  bool generates_text = false;  // GenerativeModel: chat, completions, KServe generate
  bool embeds = false;          // GenerativeModel::Embed (OpenAI /v1/embeddings)
  bool reranks = false;         // GenerativeModel::Rerank (/v1/rerank): pooling rank
  bool pipeline = false;        // backend: pipeline; ModelConfig::pipeline is set
};

struct ModelConfig {
  std::string name;     // the model's folder name
  std::string backend;  // "torch"
  // 0: the model has no batch dimension. N > 0: the first dimension of every input and
  // output is the batch, of at most N rows.
  int max_batch_size = 0;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<InstanceGroup> instances;
  DynamicBatchingConfig dynamic_batching;
  QueueConfig queue;
  // Backend-specific settings; each backend rejects keys it does not know.
  std::map<std::string, std::string> parameters;
  // `precision:` the numeric precision to serve in; each backend checks what it supports.
  Precision precision = Precision::kFp32;
  // Versions, loading, eviction, integrity and traffic (core/config/lifecycle_config.h).
  LifecycleConfig lifecycle;
  ResponseCacheConfig response_cache;
  ModelCapabilities capabilities;
  // `pipeline:` for backend: pipeline (null otherwise): steps over ops and repository models.
  std::shared_ptr<const PipelineSpec> pipeline;
  // `adapters:` LoRA adapters of a generating model (core/config/adapter_config.h), in config order
  // (a request's `lora` ids index it).
  std::vector<AdapterConfig> adapters;

  bool batched() const { return max_batch_size > 0; }

  // The shape a client sees: -1 prepended for the batch dimension when the model batches.
  Shape FullShape(const TensorSpec& spec) const;
  // A concrete shape for synthetic inputs (warm-up, tuning): `batch` rows, variable
  // dimensions 1.
  Shape ExampleShape(const TensorSpec& spec, int64_t batch) const;
  // One zero tensor of ExampleShape per input, in config order: what warm-up, batch tuning
  // and the intra-op probe run.
  absl::StatusOr<std::vector<Tensor>> ExampleInputs(int64_t batch) const;

  const TensorSpec* FindInput(std::string_view input_name) const;
  const TensorSpec* FindOutput(std::string_view output_name) const;
  const AdapterConfig* FindAdapter(std::string_view adapter_name) const;
  int total_instances() const;
};

// Execution instances one model may ask for (each is a thread with its own engine state);
// the model manager also caps the whole process (ModelManagerOptions::max_total_instances).
inline constexpr int kMaxInstancesPerModel = 64;

// Parses and validates `yaml_text`. `model_name` is the folder name; `source` names the file
// in error messages.
absl::StatusOr<ModelConfig> ParseModelConfig(std::string_view yaml_text,
                                             std::string_view model_name, std::string_view source,
                                             const ConfigDefaults& defaults = {});

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_MODEL_CONFIG_H_
