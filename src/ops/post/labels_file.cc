#include "ops/post/labels_file.h"

#include <fstream>
#include <sstream>

#include "common/status_macros.h"
#include "common/strings.h"
#include "core/pipeline/op_params.h"

namespace inferd {

absl::StatusOr<std::vector<std::string>> ReadLabelsFile(const FieldReader& reader,
                                                        const std::string& field,
                                                        const std::filesystem::path& version_dir,
                                                        const std::string& relative) {
  ASSIGN_OR_RETURN(
      const std::filesystem::path path,
      ResolveOpAsset(reader, field, version_dir, relative, kMaxLabelsFileBytes, "labels.txt"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return reader.Error(field, StrCat("cannot open ", path.string()));
  std::vector<std::string> labels;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(std::move(line));
    if (labels.size() > kMaxLabels) {
      return reader.Error(field, StrCat(path.string(), " has more than ", kMaxLabels, " lines"));
    }
  }
  if (labels.empty()) return reader.Error(field, StrCat(path.string(), " is empty"));
  return labels;
}

}  // namespace inferd
