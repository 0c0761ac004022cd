// Test-only helpers for tests that build files on disk (model repositories, version folders).

#ifndef INFERD_CORE_TESTING_TEMP_DIR_H_
#define INFERD_CORE_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "gtest/gtest.h"

namespace inferd::testing {

// A fresh folder under the system temp directory, named `<prefix>_XXXXXX` and removed with
// everything in it.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "_XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `text` to `path`, creating the parent folders first.
inline void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace inferd::testing

#endif  // INFERD_CORE_TESTING_TEMP_DIR_H_
