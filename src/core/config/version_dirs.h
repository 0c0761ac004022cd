// Version folders of a model: <repository>/<model>/<N>/.
#ifndef INFERD_CORE_CONFIG_VERSION_DIRS_H_
#define INFERD_CORE_CONFIG_VERSION_DIRS_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferd {

// A version folder name is a non-negative decimal integer in canonical form: "1", "42", "0".
// "007" (leading zeros: is it 7?), "1a", "-1", "+1", " 1" and overflowing numbers are not
// versions, so two folders can never claim the same version.
std::optional<int64_t> ParseVersionDirName(std::string_view name);

struct VersionDirScan {
  std::vector<int64_t> versions;     // ascending
  std::vector<std::string> ignored;  // folders that are not versions, for a warning
};

// Lists the version folders directly under `model_dir`. Files are skipped silently (config,
// labels); folders whose names are not versions are listed in `ignored`.
VersionDirScan ScanVersionDirs(const std::filesystem::path& model_dir);

}  // namespace inferd

#endif  // INFERD_CORE_CONFIG_VERSION_DIRS_H_
