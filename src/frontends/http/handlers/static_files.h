// The dashboard's built front end (HTML, JS, CSS), read into memory once at startup so that
// serving it touches no disk and no request path can reach outside the folder.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_STATIC_FILES_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_STATIC_FILES_H_

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

struct StaticFile {
  std::string content;
  std::string content_type;
};

class StaticFiles {
 public:
  // Every regular file directly in `dir` (not in subfolders), by file name.
  static absl::StatusOr<StaticFiles> Load(const std::filesystem::path& dir);

  // Null when there is no such file.
  const StaticFile* Find(std::string_view name) const;
  const std::filesystem::path& dir() const { return dir_; }
  size_t size() const { return files_.size(); }

 private:
  std::filesystem::path dir_;
  std::map<std::string, StaticFile, std::less<>> files_;
};

// "text/html; charset=utf-8" for "index.html", ... by extension; octet-stream otherwise.
std::string_view ContentTypeFor(std::string_view file_name);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_STATIC_FILES_H_
