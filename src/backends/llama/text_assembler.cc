#include "backends/llama/text_assembler.h"

#include <algorithm>

namespace inferd {
namespace {

// How many bytes a UTF-8 sequence starting with `lead` has; 1 for an invalid lead byte, so
// that invalid input passes through instead of being held forever.
size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Length of the longest suffix of `text` that is a proper prefix of `stop`.
size_t PartialStopSuffix(std::string_view text, std::string_view stop) {
  const size_t longest = std::min(text.size(), stop.size() - 1);
  for (size_t n = longest; n > 0; --n) {
    if (text.substr(text.size() - n) == stop.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

size_t CompleteUtf8Prefix(std::string_view text) {
  // A character has at most 4 bytes: only the last 3 can belong to an unfinished one.
  const size_t start = text.size() > 3 ? text.size() - 3 : 0;
  for (size_t i = text.size(); i > start; --i) {
    const auto byte = static_cast<unsigned char>(text[i - 1]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
    const size_t need = Utf8Length(byte);
    return text.size() - (i - 1) >= need ? text.size() : i - 1;
  }
  return text.size();
}

TextAssembler::TextAssembler(std::vector<std::string> stop) {
  for (std::string& s : stop) {
    if (!s.empty()) stop_.push_back(std::move(s));
  }
}

std::string TextAssembler::Add(std::string_view piece) {
  if (stopped_) return {};
  pending_.append(piece);
  // A stop string may start in text already held back: search the held text only, since
  // everything sent was checked against every stop string before.
  size_t stop_at = std::string::npos;
  const std::string* first = nullptr;
  for (const std::string& stop : stop_) {
    const size_t at = pending_.find(stop);
    if (at < stop_at) {
      stop_at = at;
      first = &stop;
    }
  }
  if (stop_at != std::string::npos) {
    stopped_ = true;
    stopped_by_ = *first;
    std::string out = pending_.substr(0, stop_at);
    pending_.clear();
    sent_ += out;
    return out;
  }
  size_t hold = 0;
  for (const std::string& stop : stop_) hold = std::max(hold, PartialStopSuffix(pending_, stop));
  size_t ready = pending_.size() - hold;
  ready = CompleteUtf8Prefix(std::string_view(pending_).substr(0, ready));
  std::string out = pending_.substr(0, ready);
  pending_.erase(0, ready);
  sent_ += out;
  return out;
}

std::string TextAssembler::Flush() {
  if (stopped_) return {};
  std::string out;
  const size_t complete = CompleteUtf8Prefix(pending_);
  out = pending_.substr(0, complete);
  if (complete < pending_.size()) out += "\xEF\xBF\xBD";
  pending_.clear();
  sent_ += out;
  return out;
}

}  // namespace inferd
