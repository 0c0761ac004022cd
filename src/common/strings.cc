#include "common/strings.h"

#include <algorithm>

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

std::string EscapeForLog(std::string_view text, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == max_bytes) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace inferd
