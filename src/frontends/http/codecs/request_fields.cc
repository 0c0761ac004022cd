#include "frontends/http/codecs/request_fields.h"

#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "core/backend/generation.h"

namespace inferd {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

absl::Status InvalidField(std::string_view field, const std::string& message) {
  return WithErrorField(absl::InvalidArgumentError(message), field);
}

absl::Status ReadNumber(object o, std::string_view key, double min, double max, double* out) {
  element value;
  if (o[key].get(value)) return absl::OkStatus();
  if (value.is_null()) return absl::OkStatus();
  double number = 0;
  if (value.get(number)) return InvalidField(key, StrCat("'", key, "' must be a number"));
  if (!(number >= min && number <= max)) {
    return InvalidField(key, StrCat("'", key, "' must be in [", min, ", ", max, "], got ", number));
  }
  *out = number;
  return absl::OkStatus();
}

absl::Status ReadInteger(object o, std::string_view key, int64_t min, int64_t max, int64_t* out,
                         bool* present) {
  element value;
  if (o[key].get(value) || value.is_null()) return absl::OkStatus();
  int64_t number = 0;
  if (value.get(number)) return InvalidField(key, StrCat("'", key, "' must be an integer"));
  if (number < min || number > max) {
    return InvalidField(key, StrCat("'", key, "' must be in ", min, "..", max, ", got ", number));
  }
  *out = number;
  if (present != nullptr) *present = true;
  return absl::OkStatus();
}

absl::Status ReadBool(object o, std::string_view key, bool* out) {
  element value;
  if (o[key].get(value) || value.is_null()) return absl::OkStatus();
  if (value.get(*out)) return InvalidField(key, StrCat("'", key, "' must be true or false"));
  return absl::OkStatus();
}

absl::Status ReadStops(object o, std::string_view key, std::vector<std::string>* out) {
  element value;
  if (o[key].get(value) || value.is_null()) return absl::OkStatus();
  auto add = [out, key](element item) -> absl::Status {
    std::string_view text;
    if (item.get(text)) {
      return InvalidField(key, StrCat("'", key, "' must be a string or a list of strings"));
    }
    if (text.size() > kMaxStopBytes) {
      return InvalidField(key, StrCat("a stop string may have at most ", kMaxStopBytes,
                                      " bytes, got ", text.size()));
    }
    if (!text.empty()) out->emplace_back(text);
    return absl::OkStatus();
  };
  array list;
  if (!value.get(list)) {
    if (list.size() > kMaxStopStrings) {
      return InvalidField(key,
                          StrCat("at most ", kMaxStopStrings, " stop strings, got ", list.size()));
    }
    for (element item : list) RETURN_IF_ERROR(add(item));
    return absl::OkStatus();
  }
  return add(value);
}

}  // namespace inferd
