// What llama.cpp's chat-format layer (common/chat*.cpp, compiled from source) takes from its
// common/log.cpp and common/common.cpp besides llama_common_strings.cc's string helpers; those
// files would bring the rest of llama.cpp's command-line library (argument parsing, downloads,
// a logging thread) with them. Its log lines go to inferd's log (spdlog) instead; below
// warning they are not even formatted.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "common.h"
#include "log.h"

// The chat layer only ever passes this back to common_log_add.
struct common_log {};

common_log* common_log_main() {
  static common_log log;
  return &log;
}

// LOG_TMPL formats a line only when its verbosity is at most this: warnings and errors.
int common_log_get_verbosity_thold() { return LOG_LEVEL_WARN; }

void common_log_add(common_log* /*log*/, ggml_log_level level, const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  if (n < 0) return;
  std::string line(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof(buffer) - 1));
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (level == GGML_LOG_LEVEL_ERROR) {
    spdlog::error("llama.cpp chat: {}", line);
  } else if (level == GGML_LOG_LEVEL_WARN) {
    spdlog::warn("llama.cpp chat: {}", line);
  } else {
    spdlog::debug("llama.cpp chat: {}", line);
  }
}

// As llama.cpp's own (MIT, same release): the text of one token, special tokens included
// when `special`.
std::string common_token_to_piece(const llama_vocab* vocab, llama_token token, bool special) {
  std::string piece(16, '\0');
  int n = llama_token_to_piece(vocab, token, piece.data(), static_cast<int32_t>(piece.size()), 0,
                               special);
  if (n < 0) {
    piece.resize(static_cast<size_t>(-n));
    n = llama_token_to_piece(vocab, token, piece.data(), static_cast<int32_t>(piece.size()), 0,
                             special);
  }
  piece.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return piece;
}

// As llama.cpp's own: `text`'s tokens, with BOS (when the vocabulary wants it) if
// `add_special`, special-token texts as the tokens if `parse_special`.
std::vector<llama_token> common_tokenize(const llama_vocab* vocab, const std::string& text,
                                         bool add_special, bool parse_special) {
  const int32_t length = static_cast<int32_t>(text.size());
  std::vector<llama_token> tokens(text.size() + 2 * add_special);
  int32_t n = llama_tokenize(vocab, text.data(), length, tokens.data(),
                             static_cast<int32_t>(tokens.size()), add_special, parse_special);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), length, tokens.data(),
                       static_cast<int32_t>(tokens.size()), add_special, parse_special);
  }
  tokens.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return tokens;
}
