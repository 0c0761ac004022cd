#include "common/client_paths.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace inferd {
namespace {

// Longest first, so "/a/b/repo" is removed before a shorter form such as "repo".
std::vector<std::string>& Folders() {
  static std::vector<std::string> folders;
  return folders;
}

void Add(std::string folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  // Only absolute forms: a relative one ("models") also occurs in URLs and words.
  if (folder.size() < 2 || folder.front() != '/') return;
  std::vector<std::string>& folders = Folders();
  if (std::find(folders.begin(), folders.end(), folder) != folders.end()) return;
  folders.push_back(std::move(folder));
  std::sort(folders.begin(), folders.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

}  // namespace

void HideFolderFromClients(const std::string& folder) {
  Add(folder);
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(folder, ec);
  if (!ec) Add(absolute.lexically_normal().string());
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(folder, ec);
  if (!ec) Add(canonical.string());
}

std::string WithoutServerPaths(std::string_view message) {
  std::string out(message);
  for (const std::string& folder : Folders()) {
    const std::string with_slash = folder + "/";
    for (size_t at = out.find(with_slash); at != std::string::npos; at = out.find(with_slash, at)) {
      out.erase(at, with_slash.size());
    }
    for (size_t at = out.find(folder); at != std::string::npos; at = out.find(folder, at)) {
      static constexpr std::string_view kName = "the model repository";
      out.replace(at, folder.size(), kName);
      at += kName.size();
    }
  }
  return out;
}

}  // namespace inferd
