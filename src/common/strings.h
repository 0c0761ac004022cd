// String concatenation and joining that accept std::string_view.
//
// Debian 12's Abseil is built with its own absl::string_view, so absl::StrCat rejects
// std::string_view arguments (which simdjson, Beast and our own interfaces use). These
// small helpers accept std::string_view, absl::string_view, strings and numbers alike.
#ifndef INFERD_COMMON_STRINGS_H_
#define INFERD_COMMON_STRINGS_H_

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"

namespace inferd {
namespace strings_internal {

inline void Append(std::string& out, std::string_view text) { out.append(text); }
inline void Append(std::string& out, const std::string& text) { out.append(text); }
inline void Append(std::string& out, const char* text) { out.append(text); }
inline void Append(std::string& out, absl::string_view text) {
  out.append(text.data(), text.size());
}
template <typename T>
requires std::is_integral_v<T> &&
    (!std::is_same_v<T, char>)&&(!std::is_same_v<T, bool>)inline void Append(std::string& out,
                                                                             T value) {
  out.append(std::to_string(value));
}

template <typename T>
requires std::is_floating_point_v<T>
inline void Append(std::string& out, T value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), value);
  out.append(text, end);
}

}  // namespace strings_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (strings_internal::Append(out, args), ...);
  return out;
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (strings_internal::Append(*out, args), ...);
}

// Joins the elements of `range` (each anything StrCat takes) with `separator`.
template <typename Range>
std::string StrJoin(const Range& range, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& element : range) {
    if (!first) out.append(separator);
    first = false;
    strings_internal::Append(out, element);
  }
  return out;
}

// Splits `text` at `delimiter`, dropping empty pieces ("/v2//models/" -> {"v2", "models"}).
std::vector<std::string_view> SplitSkipEmpty(std::string_view text, char delimiter);

// `text` made safe for a log line or an error message: printable ASCII stays, a quote or
// backslash gets a backslash, every other byte (newlines, escape sequences, invalid UTF-8)
// becomes \xNN, and text longer than `max_bytes` is cut with "...". Client strings (paths,
// model names, ids) go through this before they reach spdlog, so a request cannot forge a
// log line or a terminal escape.
std::string EscapeForLog(std::string_view text, size_t max_bytes = 256);

}  // namespace inferd

#endif  // INFERD_COMMON_STRINGS_H_
