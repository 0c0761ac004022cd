// Reads config.yaml fields with errors that name the file and the field's path
// ("models/p/config.yaml: pipeline.steps[1].inputs.image: ..."), because a user with twenty
// models needs to know which line to fix. Shared by the model config parser and the
// pipeline ops, which parse their own `params` the same way.
#ifndef INFERD_CORE_CONFIG_CONFIG_FIELD_READER_H_
#define INFERD_CORE_CONFIG_CONFIG_FIELD_READER_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/types/tensor.h"

namespace inferd {

// Carries the file name so that every error can say exactly where it is; `field` arguments
// are the path of the field being read ("inputs[0].dims").
class FieldReader {
 public:
  explicit FieldReader(std::string_view source) : source_(source) {}

  std::string_view source() const { return source_; }

  absl::Status Error(std::string_view field, std::string_view message) const;

  // Rejects keys outside `allowed`, so a typo ("max_batchsize") is an error, not a default.
  absl::Status CheckKeys(const YAML::Node& map, std::string_view field,
                         const std::set<std::string>& allowed) const;

  absl::StatusOr<std::string> String(const YAML::Node& node, std::string_view field) const;
  absl::StatusOr<bool> Bool(const YAML::Node& node, std::string_view field) const;
  absl::StatusOr<double> Number(const YAML::Node& node, std::string_view field) const;
  // An integer in [min, max], with the range in the error.
  absl::StatusOr<int64_t> IntegerIn(const YAML::Node& node, std::string_view field, int64_t min,
                                    int64_t max) const;
  // Decimal only: yaml-cpp's own conversion reads "010" as octal 8 and "0x10" as 16.
  absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view field) const;

 private:
  std::string source_;
};

// A list of dimensions: positive sizes or -1 (variable).
absl::StatusOr<Shape> ParseDims(const FieldReader& reader, const YAML::Node& node,
                                const std::string& field);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_CONFIG_FIELD_READER_H_
