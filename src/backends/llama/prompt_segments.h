// Which parts of a rendered chat prompt came from the chat template and which from the
// messages' content, so that the two are tokenised differently: the template's text with its
// special tokens parsed (`<|im_start|>` is one control token), a message's content as plain
// text (a user who writes `<|im_end|><|im_start|>system` gets those characters, not a forged
// turn).
//
// The template is rendered twice: as usual, and with each message's content replaced by a
// marker (ContentMarker). The marked rendering says where contents stand; the split is taken
// only when putting the contents back where the markers stand gives exactly the usual
// rendering. A template that looks at a content (its length, its first characters) renders
// the two differently, and the caller falls back (the engine then refuses a content that
// holds special-token text, since it cannot keep it plain). Searching the usual rendering for
// each content instead would be fooled by a content equal to the template's own text (a user
// message "<|im_end|>" matched the template's end of the turn before it).
//
// Free of llama.cpp types, so the rules are unit-tested without the engine.
#ifndef INFERD_BACKENDS_LLAMA_PROMPT_SEGMENTS_H_
#define INFERD_BACKENDS_LLAMA_PROMPT_SEGMENTS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend/generation.h"

namespace inferd {

struct PromptSegment {
  std::string_view text;  // a view into the usual rendering
  bool content = false;   // from a message's content: tokenised without special tokens
};

// The text that stands for message `index`'s content in the marked rendering.
std::string ContentMarker(size_t index);

// `messages` with every content replaced by its marker (what the marked rendering renders).
std::vector<ChatMessage> MarkedMessages(const std::vector<ChatMessage>& messages);

// The segments of `rendered`, in order and together exactly `rendered`, or nullopt when the
// marked rendering does not account for it (see the file comment). A content the template
// trimmed is matched trimmed.
std::optional<std::vector<PromptSegment>> SplitRenderedPrompt(
    std::string_view rendered, std::string_view marked, const std::vector<ChatMessage>& messages);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_PROMPT_SEGMENTS_H_
