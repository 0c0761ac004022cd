#include "common/strings.h"

namespace inferd {

std::vector<std::string_view> SplitSkipEmpty(std::string_view text, char delimiter) {
  std::vector<std::string_view> pieces;
  while (!text.empty()) {
    const size_t end = text.find(delimiter);
    const std::string_view piece = text.substr(0, end);
    if (!piece.empty()) pieces.push_back(piece);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return pieces;
}

}  // namespace inferd
