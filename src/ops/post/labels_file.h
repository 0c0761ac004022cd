// A labels file (one label per line) a classification op names in its params, relative to
// the pipeline's version folder. Read and checked once, at load.
#ifndef INFERD_OPS_POST_LABELS_FILE_H_
#define INFERD_OPS_POST_LABELS_FILE_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/config/config_field_reader.h"

namespace inferd {

// Bounds on what a labels file may hold (a repository file is trusted, but a typo pointing
// at a model file must not be read into memory as labels).
inline constexpr uintmax_t kMaxLabelsFileBytes = 16 << 20;
inline constexpr size_t kMaxLabels = 1 << 20;

// Reads `relative` (inside `version_dir`; a path that leaves it is refused). Errors name
// `field` ("params.labels"). A trailing newline and '\r' line ends are allowed; an empty file
// is an error.
absl::StatusOr<std::vector<std::string>> ReadLabelsFile(const FieldReader& reader,
                                                        const std::string& field,
                                                        const std::filesystem::path& version_dir,
                                                        const std::string& relative);

}  // namespace inferd

#endif  // INFERD_OPS_POST_LABELS_FILE_H_
