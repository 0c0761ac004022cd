#include "core/pipeline/op_params.h"

#include <algorithm>
#include <system_error>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {

absl::StatusOr<YAML::Node> LoadOpParams(const OpLoadRequest& request, const FieldReader& reader,
                                        const std::set<std::string>& allowed) {
  YAML::Node params;
  try {
    params = YAML::Load(request.params_yaml);
  } catch (const YAML::Exception& e) {
    return reader.Error("params", StrCat("not valid YAML: ", e.msg));
  }
  if (!params || params.IsNull()) return YAML::Node(YAML::NodeType::Map);
  RETURN_IF_ERROR(reader.CheckKeys(params, "params", allowed));
  return params;
}

absl::StatusOr<std::filesystem::path> ResolveOpAsset(
    const FieldReader& reader, const std::string& field, const std::filesystem::path& version_dir,
    const std::string& relative, uintmax_t max_bytes, std::string_view example) {
  const std::filesystem::path given(relative);
  if (given.is_absolute()) {
    return reader.Error(field, StrCat("'", relative,
                                      "' is absolute; give a path relative to the version "
                                      "folder (for example ",
                                      example, ")"));
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
  if (ec) return reader.Error(field, StrCat("cannot read ", path.string(), ": ", ec.message()));
  if (size > max_bytes) {
    return reader.Error(field, StrCat(path.string(), " has ", size, " bytes; a ", example,
                                      " file may have at most ", max_bytes));
  }
  return path;
}

}  // namespace inferd
