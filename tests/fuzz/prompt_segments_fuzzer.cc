// The chat prompt splitter (src/backends/llama/prompt_segments.h), which decides what of a
// rendered prompt is a message's content (tokenised as plain text) and what the template's
// (special tokens parsed). Input: pieces separated by NUL: the template's text between
// messages, then each message's content. Checked: the segments always add up to the rendered
// prompt, and every content segment is text of a message's content; arbitrary text as both
// renderings never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "backends/llama/prompt_segments.h"

namespace {

std::vector<std::string_view> Pieces(std::string_view data) {
  std::vector<std::string_view> pieces;
  while (pieces.size() < 16) {
    const size_t end = data.find('\0');
    pieces.push_back(data.substr(0, end));
    if (end == std::string_view::npos) break;
    data.remove_prefix(end + 1);
  }
  return pieces;
}

std::string Render(std::string_view between, const std::vector<inferd::ChatMessage>& messages) {
  std::string out;
  for (const inferd::ChatMessage& message : messages) {
    out.append(between).append(message.content).append(between);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string_view> pieces =
      Pieces(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<inferd::ChatMessage> messages;
  for (size_t i = 1; i < pieces.size(); ++i) messages.push_back({"user", std::string(pieces[i])});
  const std::string rendered = Render(pieces[0], messages);
  const std::string marked = Render(pieces[0], inferd::MarkedMessages(messages));
  const auto segments = inferd::SplitRenderedPrompt(rendered, marked, messages);
  if (segments) {
    std::string joined;
    for (const inferd::PromptSegment& segment : *segments) {
      joined.append(segment.text);
      // A content segment is some message's content, never text of the template's alone (a
      // template may render a content twice, and marker text in the template itself stands
      // for a content only where that content's text stands in the rendering too).
      if (!segment.content) continue;
      bool known = false;
      for (const inferd::ChatMessage& message : messages) {
        known = known || message.content.find(segment.text) != std::string::npos;
      }
      if (!known) abort();
    }
    if (joined != rendered) abort();
  }
  // Arbitrary text as both renderings.
  if (pieces.size() >= 2) {
    const auto any = inferd::SplitRenderedPrompt(pieces[0], pieces[1], messages);
    if (any) {
      std::string joined;
      for (const inferd::PromptSegment& segment : *any) joined.append(segment.text);
      if (joined != pieces[0]) abort();
    }
  }
  return 0;
}
