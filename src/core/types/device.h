// Where a model runs: the `device` of an instance group in config.yaml.
//
// Syntax only: whether a CUDA device is present is the backend's question at load time, so
// a config written for a GPU server still parses on a laptop and fails its load with a reason.
#ifndef INFERD_CORE_TYPES_DEVICE_H_
#define INFERD_CORE_TYPES_DEVICE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

struct Device {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int index = 0;  // the CUDA device ordinal as this process sees it (after CUDA_VISIBLE_DEVICES)

  bool is_cuda() const { return kind == Kind::kCuda; }
  // "cpu" or "cuda:N": the canonical spelling, for messages and the backends.
  std::string ToString() const;
  friend bool operator==(const Device&, const Device&) = default;
};

// "cpu", "cuda" (= "cuda:0") or "cuda:N". InvalidArgument with the accepted forms otherwise.
absl::StatusOr<Device> ParseDevice(std::string_view text);

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_DEVICE_H_
