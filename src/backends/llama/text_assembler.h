// Turns a sequence's token pieces into the text a client may see: never half a UTF-8
// character (a piece can end inside one), never any part of a stop string (text that could
// still turn into one is held back until it cannot).
//
// Free of llama.cpp types; one per sequence, used by the decode thread only.
#ifndef INFERD_BACKENDS_LLAMA_TEXT_ASSEMBLER_H_
#define INFERD_BACKENDS_LLAMA_TEXT_ASSEMBLER_H_

#include <string>
#include <string_view>
#include <vector>

namespace inferd {

class TextAssembler {
 public:
  explicit TextAssembler(std::vector<std::string> stop = {});

  // Adds one piece; returns the text that is now safe to send (possibly empty). After a
  // stop string appears, returns the text before it and stopped() turns true.
  std::string Add(std::string_view piece);
  // The end of the sequence: what was held back, with an unfinished UTF-8 character
  // replaced by U+FFFD.
  std::string Flush();

  bool stopped() const { return stopped_; }
  // The stop string that stopped it (the one that appeared first); empty before.
  const std::string& stopped_by() const { return stopped_by_; }
  // Everything sent so far.
  const std::string& text() const { return sent_; }

 private:
  std::vector<std::string> stop_;
  std::string pending_;  // received, not sent
  std::string sent_;
  bool stopped_ = false;
  std::string stopped_by_;
};

// Length of the longest prefix of `text` that ends on a UTF-8 character boundary (an
// unfinished multi-byte sequence at the end is left out).
size_t CompleteUtf8Prefix(std::string_view text);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_TEXT_ASSEMBLER_H_
