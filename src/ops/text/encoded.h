// One encoded text, as either tokenizer of the tokenize op gives it.
#ifndef INFERD_OPS_TEXT_ENCODED_H_
#define INFERD_OPS_TEXT_ENCODED_H_

#include <cstdint>
#include <vector>

namespace inferd {

// Ids, attention mask and token type ids, of equal length.
struct Encoded {
  std::vector<uint32_t> ids, mask, type_ids;
};

}  // namespace inferd

#endif  // INFERD_OPS_TEXT_ENCODED_H_
