// Which version of which model: the key the model manager and the memory budget use for one
// loaded (or loadable) version, compared field by field instead of as a "name:version" string
// to be split again.
#ifndef INFERD_CORE_TYPES_VERSION_KEY_H_
#define INFERD_CORE_TYPES_VERSION_KEY_H_

#include <compare>
#include <cstdint>
#include <string>

#include "common/strings.h"

namespace inferd {

struct VersionKey {
  std::string name;
  int64_t version = 0;

  auto operator<=>(const VersionKey&) const = default;
  bool operator==(const VersionKey&) const = default;

  // "name:version", for messages and logs only.
  std::string ToString() const { return StrCat(name, ":", version); }
};

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_VERSION_KEY_H_
