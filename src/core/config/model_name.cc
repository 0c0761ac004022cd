#include "core/config/model_name.h"

#include <algorithm>

#include "common/strings.h"

namespace inferd {

absl::Status ValidateModelName(std::string_view name) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("model name '", EscapeForLog(name, 64), "' is not valid: ", why, " (a name is 1 to ",
               kMaxModelNameBytes,
               " printable ASCII characters, no space, '/' or '\\', not starting with '.')"));
  };
  if (name.empty()) return invalid("it is empty");
  if (name.size() > kMaxModelNameBytes) return invalid(StrCat("it is ", name.size(), " bytes"));
  if (name.front() == '.') return invalid("it starts with '.'");
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) {
    return c > ' ' && c < 0x7f && c != '/' && c != '\\';
  });
  if (!printable) return invalid("it has a character outside the allowed set");
  return absl::OkStatus();
}

}  // namespace inferd
