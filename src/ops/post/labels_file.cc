#include "ops/post/labels_file.h"

#include <fstream>
#include <sstream>

#include "common/strings.h"

namespace inferd {

absl::StatusOr<std::vector<std::string>> ReadLabelsFile(const FieldReader& reader,
                                                        const std::string& field,
                                                        const std::filesystem::path& version_dir,
                                                        const std::string& relative) {
  const std::filesystem::path given(relative);
  if (given.is_absolute()) {
    return reader.Error(field, StrCat("'", relative,
                                      "' is absolute; give a path relative to the version "
                                      "folder (for example labels.txt)"));
  }
  std::error_code ec;
  const std::filesystem::path root = std::filesystem::weakly_canonical(version_dir, ec);
  const std::filesystem::path path = std::filesystem::weakly_canonical(version_dir / given, ec);
  // Symlinks and ".." resolved: the file must still be inside the version folder.
  const auto [root_end, path_it] =
      std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  if (ec || root_end != root.end()) {
    return reader.Error(field, StrCat("'", relative, "' leaves the version folder ",
                                      version_dir.string(), "; keep assets inside it"));
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    return reader.Error(field, StrCat("cannot read ", path.string(), ": ", ec.message()));
  }
  if (size > kMaxLabelsFileBytes) {
    return reader.Error(field, StrCat(path.string(), " has ", size,
                                      " bytes; a labels file may "
                                      "have at most ",
                                      kMaxLabelsFileBytes));
  }
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
