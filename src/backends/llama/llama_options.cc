#include "backends/llama/llama_options.h"

#include <charconv>
#include <map>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// Block sizes of ggml's KV cache types: bytes per block / elements per block.
const std::map<std::string, double>& KvTypes() {
  static const auto* types = new std::map<std::string, double>{
      {"f32", 4.0},          {"f16", 2.0},          {"bf16", 2.0},         {"q8_0", 34.0 / 32.0},
      {"q4_0", 18.0 / 32.0}, {"q4_1", 20.0 / 32.0}, {"q5_0", 22.0 / 32.0}, {"q5_1", 24.0 / 32.0},
  };
  return *types;
}

absl::StatusOr<int64_t> ParseInt(const std::string& value, const std::string& field, int64_t min,
                                 int64_t max, const std::string& config_path) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < min || n > max) {
    return absl::InvalidArgumentError(StrCat(config_path, ": parameters.", field,
                                             ": must be an integer in ", min, "..", max, ", got '",
                                             value, "'"));
  }
  return n;
}

}  // namespace

double KvCacheElementBytes(const std::string& type) {
  auto it = KvTypes().find(type);
  return it == KvTypes().end() ? 0 : it->second;
}

absl::Status CheckGpuOffload(const LlamaOptions& options, bool supports_gpu_offload,
                             const std::string& config_path) {
  if (options.gpu_layers == 0) return absl::OkStatus();
  if (!supports_gpu_offload) {
    return absl::FailedPreconditionError(
        StrCat(config_path, ": parameters.gpu_layers: ", options.gpu_layers,
               ": this build's llama.cpp has no GPU offload (llama_supports_gpu_offload() is "
               "false: the CPU build); remove gpu_layers or set it to 0"));
  }
  return absl::UnimplementedError(
      StrCat(config_path, ": parameters.gpu_layers: ", options.gpu_layers,
             ": this llama.cpp can offload, but inferd does not yet count offloaded layers in "
             "the cuda:N memory budget (docs/gpu.md); set it to 0"));
}

absl::StatusOr<LlamaOptions> ParseLlamaOptions(const ModelConfig& config,
                                               const std::string& config_path) {
  LlamaOptions options;
  for (const auto& [key, value] : config.parameters) {
    if (key == "context_length") {
      ASSIGN_OR_RETURN(options.context_length, ParseInt(value, key, 16, 1 << 20, config_path));
    } else if (key == "parallel") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt(value, key, 1, 256, config_path));
      options.parallel = static_cast<int>(n);
    } else if (key == "threads") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt(value, key, 0, 1024, config_path));
      options.threads = static_cast<int>(n);
    } else if (key == "batch_threads") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt(value, key, 0, 1024, config_path));
      options.batch_threads = static_cast<int>(n);
    } else if (key == "batch_size") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt(value, key, 1, 1 << 16, config_path));
      options.batch_size = static_cast<int>(n);
    } else if (key == "ubatch_size") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt(value, key, 1, 1 << 16, config_path));
      options.ubatch_size = static_cast<int>(n);
    } else if (key == "kv_cache_type") {
      if (KvCacheElementBytes(value) == 0) {
        std::vector<std::string> names;
        for (const auto& [name, bytes] : KvTypes()) names.push_back(name);
        return absl::InvalidArgumentError(StrCat(config_path, ": parameters.kv_cache_type: '",
                                                 value, "' is not a KV cache type (one of ",
                                                 StrJoin(names, ", "), ")"));
      }
      options.kv_cache_type = value;
    } else if (key == "flash_attention") {
      if (value != "auto" && value != "on" && value != "off") {
        return absl::InvalidArgumentError(
            StrCat(config_path, ": parameters.flash_attention: must be auto, on or off, got '",
                   value, "'"));
      }
      options.flash_attention = value;
    } else if (key == "kv_unified") {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(StrCat(
            config_path, ": parameters.kv_unified: must be true or false, got '", value, "'"));
      }
      options.kv_unified = value == "true";
    } else if (key == "max_tokens") {
      ASSIGN_OR_RETURN(options.max_tokens, ParseInt(value, key, 0, 1 << 20, config_path));
    } else if (key == "max_queue") {
      ASSIGN_OR_RETURN(options.max_queue, ParseInt(value, key, 1, 1 << 16, config_path));
    } else if (key == "embeddings") {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(StrCat(
            config_path, ": parameters.embeddings: must be true or false, got '", value, "'"));
      }
      options.embeddings = value == "true";
    } else if (key == "special_tokens_in_messages") {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(StrCat(
            config_path, ": parameters.special_tokens_in_messages: must be true or false, got '",
            value, "'"));
      }
      options.special_tokens_in_messages = value == "true";
    } else if (key == "gpu_layers") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt(value, key, 0, 1024, config_path));
      options.gpu_layers = static_cast<int>(n);
    } else if (key == "pooling") {
      if (value != "auto" && value != "mean" && value != "cls" && value != "last" &&
          value != "rank") {
        return absl::InvalidArgumentError(StrCat(
            config_path, ": parameters.pooling: must be auto, mean, cls, last or rank, got '",
            value, "'"));
      }
      options.pooling = value;
    } else {
      return absl::InvalidArgumentError(StrCat(
          config_path, ": parameters.", key,
          ": unknown parameter for backend 'llama' (known: context_length, parallel, threads, "
          "batch_threads, batch_size, ubatch_size, kv_cache_type, flash_attention, kv_unified, "
          "max_tokens, max_queue, embeddings, pooling, special_tokens_in_messages, gpu_layers)"));
    }
  }
  if (options.pooling == "rank" && !options.embeddings) {
    return absl::InvalidArgumentError(
        StrCat(config_path,
               ": parameters.pooling: rank makes a reranker, whose second context scores pairs: "
               "it needs parameters.embeddings: true"));
  }
  if (options.ubatch_size > options.batch_size) {
    return absl::InvalidArgumentError(StrCat(config_path, ": parameters.ubatch_size (",
                                             options.ubatch_size, ") must not exceed batch_size (",
                                             options.batch_size, ")"));
  }
  if (options.batch_size < options.parallel) {
    return absl::InvalidArgumentError(
        StrCat(config_path, ": parameters.batch_size (", options.batch_size,
               ") must be at least parallel (", options.parallel,
               "): every running sequence adds one token to each step"));
  }
  if (options.max_tokens > options.context_length) {
    return absl::InvalidArgumentError(StrCat(config_path, ": parameters.max_tokens (",
                                             options.max_tokens, ") exceeds context_length (",
                                             options.context_length, ")"));
  }
  for (const InstanceGroup& group : config.instances) {
    if (group.device != "cpu") {
      return absl::InvalidArgumentError(
          StrCat(config_path, ": instances: device '", group.device,
                 "': this build's llama.cpp is the CPU build (only device cpu)"));
    }
  }
  if (config.total_instances() != 1) {
    return absl::InvalidArgumentError(
        StrCat(config_path,
               ": instances: a llama model has one decode loop (count 1); use "
               "parameters.parallel for concurrent sequences"));
  }
  return options;
}

}  // namespace inferd
