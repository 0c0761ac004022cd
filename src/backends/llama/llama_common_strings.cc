// The string helpers llama.cpp's JSON schema converter (common/json-schema*.cpp) and its
// chat-format layer (common/chat*.cpp), compiled from source, take from its common/common.cpp,
// which the llama-cpp-python wheel does not ship and which would bring the rest of llama.cpp's
// command-line library with it. Same behaviour as llama.cpp's own (MIT, same release).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

std::string string_join(const std::vector<std::string>& values, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) joined += separator;
    joined += values[i];
  }
  return joined;
}

std::vector<std::string> string_split(const std::string& str, const std::string& delimiter) {
  std::vector<std::string> parts;
  size_t start = 0;
  size_t end = str.find(delimiter);
  while (end != std::string::npos) {
    parts.push_back(str.substr(start, end - start));
    start = end + delimiter.length();
    end = str.find(delimiter, start);
  }
  parts.push_back(str.substr(start));
  return parts;
}

std::string string_repeat(const std::string& str, size_t n) {
  std::string repeated;
  repeated.reserve(str.length() * n);
  for (size_t i = 0; i < n; ++i) repeated += str;
  return repeated;
}

void string_replace_all(std::string& s, const std::string& search, const std::string& replace) {
  if (search.empty()) return;
  std::string replaced;
  replaced.reserve(s.length());
  size_t pos = 0;
  size_t last = 0;
  while ((pos = s.find(search, last)) != std::string::npos) {
    replaced.append(s, last, pos - last);
    replaced += replace;
    last = pos + search.length();
  }
  replaced.append(s, last, std::string::npos);
  s = std::move(replaced);
}
