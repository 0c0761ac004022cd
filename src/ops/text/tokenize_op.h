// `op: tokenize`: text (a BYTES input, one UTF-8 string per row) to the token ids a language
// model takes, through a Hugging Face tokenizer.json (the `tokenizers` crate, the same code
// as Python's `tokenizers`) or a SentencePiece .model (Debian's libsentencepiece). Params:
//   tokenizer: tokenizer.json        relative to the pipeline's version folder (required);
//                                    a name ending in .model is a SentencePiece model
//   max_length: 128                  1..8192 (required): every output is [max_length]
//   add_special_tokens: true         tokenizer.json: the post-processor's [CLS]/[SEP], <s>/</s>
//   add_bos, add_eos: false          SentencePiece: the model's BOS/EOS pieces
//   pad_id: 0                        default: tokenizer.json's padding pad_id, the .model's
//                                    pad piece, else 0
//   datatype: INT64 | INT32          of the outputs (default INT64)
//   max_text_bytes: 1048576          a longer row is refused before tokenizing
// Ids are Python's `Tokenizer.from_file(f).encode(text, add_special_tokens)` with the file's
// truncation capped at max_length (or `enable_truncation(max_length)` when it declares none),
// or sentencepiece's `encode(text, add_bos=, add_eos=)` with the pieces cut to fit, then
// padded to max_length (mask 0). docs/text-ops.md has the details.
//
// Port `text` (BYTES, one string per row) in; ports `ids`, `attention_mask`, `type_ids` out,
// each [B, max_length].
#ifndef INFERD_OPS_TEXT_TOKENIZE_OP_H_
#define INFERD_OPS_TEXT_TOKENIZE_OP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

absl::StatusOr<std::unique_ptr<PipelineOp>> MakeTokenizeOp(const OpLoadRequest& request);

}  // namespace inferd

#endif  // INFERD_OPS_TEXT_TOKENIZE_OP_H_
