#include "backends/llama/prompt_segments.h"

#include <charconv>

namespace inferd {
namespace {

// ASCII record separators around a number: no template changes them, and a content holding
// the opening text makes the split refuse itself (the marked rendering no longer accounts for
// the usual one).
constexpr std::string_view kMarkerOpen = "\x1einferd-content-";
constexpr char kMarkerClose = '\x1e';

std::string_view Trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace

std::string ContentMarker(size_t index) {
  std::string marker(kMarkerOpen);
  marker += std::to_string(index);
  marker += kMarkerClose;
  return marker;
}

std::vector<ChatMessage> MarkedMessages(const std::vector<ChatMessage>& messages) {
  std::vector<ChatMessage> marked;
  marked.reserve(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    marked.push_back({messages[i].role, ContentMarker(i)});
  }
  return marked;
}

std::optional<std::vector<PromptSegment>> SplitRenderedPrompt(
    std::string_view rendered, std::string_view marked, const std::vector<ChatMessage>& messages) {
  std::vector<PromptSegment> segments;
  size_t pos = 0;  // in `rendered`: everything before it is in segments
  // Template text of the marked rendering must stand in the usual one unchanged.
  auto take_template = [&](std::string_view text) {
    if (text.empty()) return true;
    if (rendered.substr(pos, text.size()) != text) return false;
    // Template text on both sides of an empty content is one segment (tokenised together).
    if (!segments.empty() && !segments.back().content) {
      segments.back().text = rendered.substr(pos - segments.back().text.size(),
                                             segments.back().text.size() + text.size());
    } else {
      segments.push_back({rendered.substr(pos, text.size()), false});
    }
    pos += text.size();
    return true;
  };
  size_t cursor = 0;  // in `marked`
  while (true) {
    const size_t open = marked.find(kMarkerOpen, cursor);
    if (open == std::string_view::npos) break;
    if (!take_template(marked.substr(cursor, open - cursor))) return std::nullopt;
    const size_t digits = open + kMarkerOpen.size();
    const size_t close = marked.find(kMarkerClose, digits);
    if (close == std::string_view::npos) return std::nullopt;
    size_t index = 0;
    const auto [end, ec] = std::from_chars(marked.data() + digits, marked.data() + close, index);
    if (ec != std::errc() || end != marked.data() + close || index >= messages.size()) {
      return std::nullopt;
    }
    cursor = close + 1;
    std::string_view content = messages[index].content;
    if (rendered.substr(pos, content.size()) != content) {
      content = Trimmed(content);
      if (rendered.substr(pos, content.size()) != content) return std::nullopt;
    }
    if (!content.empty()) segments.push_back({rendered.substr(pos, content.size()), true});
    pos += content.size();
  }
  if (!take_template(marked.substr(cursor))) return std::nullopt;
  if (pos != rendered.size()) return std::nullopt;
  return segments;
}

}  // namespace inferd
