#include "core/config/version_dirs.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace inferd {

std::optional<int64_t> ParseVersionDirName(std::string_view name) {
  if (name.empty() || (name.size() > 1 && name[0] == '0')) return std::nullopt;
  int64_t version = 0;
  // from_chars accepts a leading '-' for signed types; a version never has one.
  if (name[0] < '0' || name[0] > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), version);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return version;
}

VersionDirScan ScanVersionDirs(const std::filesystem::path& model_dir) {
  VersionDirScan scan;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(model_dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    const std::string name = entry.path().filename().string();
    if (std::optional<int64_t> version = ParseVersionDirName(name)) {
      scan.versions.push_back(*version);
    } else {
      scan.ignored.push_back(name);
    }
  }
  std::sort(scan.versions.begin(), scan.versions.end());
  std::sort(scan.ignored.begin(), scan.ignored.end());
  return scan;
}

}  // namespace inferd
