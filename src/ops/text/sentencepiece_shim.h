/* SentencePiece behind a C ABI, built as its own module (libinferd_sentencepiece_shim.so) and
 * dlopen'ed RTLD_LOCAL by sentencepiece_tokenizer.cc. Two reasons, both from Debian's build:
 * - <sentencepiece_processor.h> declares `namespace absl { using std::string_view; }`, which
 *   makes absl::string_view ambiguous beside Debian's Abseil (ABSL_OPTION_USE_STD_STRING_VIEW
 *   0): only sentencepiece_shim.cc includes it, with std headers alone;
 * - libsentencepiece.so.0 exports its own protobuf-lite 3.14, which must not meet gRPC's
 *   libprotobuf 3.21: the module sits beside a copy of it marked DF_SYMBOLIC
 *   (make_symbolic_copy.py), which sentencepiece_tokenizer.cc opens first.
 * Errors are written into a caller buffer (no allocation crosses the boundary). */
#ifndef INFERD_OPS_TEXT_SENTENCEPIECE_SHIM_H_
#define INFERD_OPS_TEXT_SENTENCEPIECE_SHIM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct InferdSpm InferdSpm;

/* Null with `error` filled when the model cannot be loaded. */
InferdSpm* inferd_spm_load(const char* path, char* error, size_t error_size);
void inferd_spm_free(InferdSpm* spm);

/* Encodes UTF-8 text into piece ids. Returns the piece count n and writes the first
 * min(n, capacity) ids, or returns -1 with `error` filled. Thread-safe. */
int64_t inferd_spm_encode(const InferdSpm* spm, const char* text, size_t len, int32_t* ids,
                          size_t capacity, char* error, size_t error_size);

/* The BOS/EOS/PAD ids (-1 when the model has none). */
int32_t inferd_spm_bos_id(const InferdSpm* spm);
int32_t inferd_spm_eos_id(const InferdSpm* spm);
int32_t inferd_spm_pad_id(const InferdSpm* spm);

#ifdef __cplusplus
}
#endif

#endif /* INFERD_OPS_TEXT_SENTENCEPIECE_SHIM_H_ */
