/* C ABI of src/rust/tokenizers_ffi: the Hugging Face `tokenizers` crate (0.23.2), for
 * inferd's `op: tokenize`. No panic crosses this boundary; errors come back as strings the
 * caller frees with inferd_tok_free_string. */
#ifndef INFERD_TOKENIZERS_H_
#define INFERD_TOKENIZERS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct InferdTokenizer InferdTokenizer;

/* Loads a tokenizer.json; null with *error set on failure. */
InferdTokenizer* inferd_tok_from_file(const char* path, char** error);

/* What tokenizer.json declares: *has_padding 1 when it has a padding section (then *pad_id
 * is its pad_id), *truncation_max_length its truncation max_length or 0. Out pointers may
 * be null. Returns 0, or -1 for a null tokenizer. */
int inferd_tok_declared(const InferdTokenizer* tok, int* has_padding, uint32_t* pad_id,
                        size_t* truncation_max_length);

/* Caps every encoding at max_length tokens: tokenizer.json's truncation kept with its
 * max_length lowered to max_length (or the default right truncation at max_length, keeping
 * special tokens); a declared padding section becomes fixed padding to max_length (pad_id
 * replaces its id when set_pad_id is nonzero). Call once, before sharing the tokenizer.
 * Returns 0, or -1 with *error set (max_length too small for the special tokens). */
int inferd_tok_configure(InferdTokenizer* tok, size_t max_length, int set_pad_id, uint32_t pad_id,
                         char** error);

/* Encodes len bytes of text (UTF-8 is checked: "not UTF-8 (byte K)" names the first bad
 * byte), with tokenizer.json's own truncation and padding applied as Python's
 * Tokenizer.encode does. Returns the token count, or with *error set -1 when the text is not
 * UTF-8 and -2 for any other failure. If the count
 * exceeds capacity nothing is written: retry with that capacity. mask and type_ids may be
 * null. Thread-safe for one tokenizer. */
int64_t inferd_tok_encode(const InferdTokenizer* tok, const uint8_t* text, size_t len,
                          int add_special, uint32_t* ids, uint32_t* mask, uint32_t* type_ids,
                          size_t capacity, char** error);

/* -1 when len bytes of text are UTF-8 (the check inferd_tok_encode makes), else the offset of
 * the first invalid byte. For text another tokenizer is about to read. */
int64_t inferd_utf8_invalid_at(const uint8_t* text, size_t len);

void inferd_tok_free(InferdTokenizer* tok);
void inferd_tok_free_string(char* text);

#ifdef __cplusplus
}
#endif

#endif /* INFERD_TOKENIZERS_H_ */
