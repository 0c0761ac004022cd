#include "frontends/http/handlers/static_files.h"

#include <fstream>
#include <sstream>

#include "common/strings.h"

namespace inferd {

std::string_view ContentTypeFor(std::string_view name) {
  auto ends = [&](std::string_view ext) { return name.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".json")) return "application/json";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  return "application/octet-stream";
}

absl::StatusOr<StaticFiles> StaticFiles::Load(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(StrCat("'", dir.string(), "' is not a folder"));
  }
  StaticFiles files;
  files.dir_ = dir;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) return absl::UnavailableError(StrCat("cannot read ", entry.path().string()));
    std::ostringstream content;
    content << in.rdbuf();
    const std::string name = entry.path().filename().string();
    files.files_[name] = StaticFile{content.str(), std::string(ContentTypeFor(name))};
  }
  if (ec) return absl::UnavailableError(StrCat("cannot list '", dir.string(), "': ", ec.message()));
  return files;
}

const StaticFile* StaticFiles::Find(std::string_view name) const {
  auto it = files_.find(name);
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace inferd
