#include "core/config/config_field_reader.h"

#include <charconv>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

std::string ScalarOrYaml(const YAML::Node& node) {
  return node.IsScalar() ? node.as<std::string>() : YAML::Dump(node);
}

}  // namespace

absl::Status FieldReader::Error(std::string_view field, std::string_view message) const {
  return absl::InvalidArgumentError(StrCat(source_, ": ", field, ": ", message));
}

absl::Status FieldReader::CheckKeys(const YAML::Node& map, std::string_view field,
                                    const std::set<std::string>& allowed) const {
  if (!map.IsMap()) return Error(field, "must be a mapping");
  for (const auto& entry : map) {
    const std::string key = entry.first.as<std::string>();
    if (!allowed.count(key)) {
      return Error(field.empty() ? key : StrCat(field, ".", key),
                   StrCat("unknown field (known: ", StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FieldReader::String(const YAML::Node& node,
                                                std::string_view field) const {
  if (!node.IsScalar() || node.as<std::string>().empty()) {
    return Error(field, "must be a non-empty string");
  }
  return node.as<std::string>();
}

absl::StatusOr<bool> FieldReader::Bool(const YAML::Node& node, std::string_view field) const {
  if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) {
    return node.Scalar() == "true";
  }
  return Error(field, StrCat("must be true or false, got '", ScalarOrYaml(node), "'"));
}

absl::StatusOr<double> FieldReader::Number(const YAML::Node& node, std::string_view field) const {
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  return Error(field, StrCat("must be a number, got '", ScalarOrYaml(node), "'"));
}

absl::StatusOr<int64_t> FieldReader::IntegerIn(const YAML::Node& node, std::string_view field,
                                               int64_t min, int64_t max) const {
  ASSIGN_OR_RETURN(int64_t value, Integer(node, field));
  if (value < min || value > max) {
    return Error(field, StrCat("must be in ", min, "..", max, ", got ", value));
  }
  return value;
}

absl::StatusOr<int64_t> FieldReader::Integer(const YAML::Node& node, std::string_view field) const {
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool leading_zero = text.size() > 1 && (text[0] == '0' || text.starts_with("-0"));
    if (ec == std::errc() && end == text.data() + text.size() && !leading_zero) return value;
  }
  return Error(field,
               StrCat("must be an integer (decimal digits), got '", ScalarOrYaml(node), "'"));
}

absl::StatusOr<Shape> ParseDims(const FieldReader& reader, const YAML::Node& node,
                                const std::string& field) {
  if (!node.IsSequence()) return reader.Error(field, "must be a list of integers");
  Shape dims;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string dim_field = StrCat(field, "[", i, "]");
    ASSIGN_OR_RETURN(int64_t dim, reader.Integer(node[i], dim_field));
    if (dim == 0 || dim < -1) {
      return reader.Error(dim_field, StrCat("must be a positive size or -1 (variable), got ", dim));
    }
    dims.push_back(dim);
  }
  return dims;
}

}  // namespace inferd
