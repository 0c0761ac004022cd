// LoRA adapters a generating model declares (config.yaml `adapters:`) and how a request names
// one: "model": "base:adapter".
//
//   adapters:
//     - name: tone               # the model-name rule, without ':' (which separates it)
//       path: adapters/tone.gguf # relative to the version folder; a GGUF LoRA adapter
//       scale: 1.0               # optional (1.0); finite, |scale| <= kMaxAdapterScale
#ifndef INFERD_CORE_CONFIG_ADAPTER_CONFIG_H_
#define INFERD_CORE_CONFIG_ADAPTER_CONFIG_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace inferd {

class FieldReader;

// Adapters one model may declare: each is loaded with the model and held while it is.
inline constexpr size_t kMaxAdapters = 64;
// The largest |scale| a config or a request may give an adapter: beyond a few times its
// trained strength an adapter's output is noise, and a huge scale overflows the activations.
inline constexpr double kMaxAdapterScale = 4.0;

struct AdapterConfig {
  std::string name;
  std::string path;  // relative to the version folder
  double scale = 1.0;
};

// Parses `adapters:` (a list of {name, path, scale}); errors name the field.
absl::StatusOr<std::vector<AdapterConfig>> ParseAdapters(const FieldReader& reader,
                                                         const YAML::Node& node);

// The checks a config's and a request's scale pass: finite, |scale| <= kMaxAdapterScale.
// `field` names it in the message.
absl::Status CheckAdapterScale(double scale, std::string_view field);

// "base:adapter" split at its last ':' into base and adapter; nullopt without a ':' (or with
// an empty side).
struct AdapterName {
  std::string_view base;
  std::string_view adapter;
};
std::optional<AdapterName> SplitAdapterName(std::string_view name);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_ADAPTER_CONFIG_H_
