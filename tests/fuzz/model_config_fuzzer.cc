// config.yaml: the model config parser and validator (versions, traffic, queue, batching).
// Input: the file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/config/model_config.h"
#include "tests/fuzz/fuzz_server.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  inferd::fuzz::SilenceLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<inferd::ModelConfig> config =
      inferd::ParseModelConfig(text, "m", "m/config.yaml", {.max_batch_size = 4});
  if (!config.ok()) return 0;
  // What the server computes from a valid config at load time must not overflow either.
  for (const inferd::TensorSpec& spec : config->inputs) {
    (void)config->FullShape(spec);
    (void)config->ExampleShape(spec, config->batched() ? config->max_batch_size : 1);
    if (config->FindInput(spec.name) == nullptr) __builtin_trap();
  }
  for (const inferd::TensorSpec& spec : config->outputs) {
    if (config->FindOutput(spec.name) == nullptr) __builtin_trap();
  }
  (void)config->total_instances();
  return 0;
}
