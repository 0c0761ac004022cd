//! C ABI over the Hugging Face `tokenizers` crate for inferd's `op: tokenize`
//! (declared in include/inferd_tokenizers.h).
//!
//! Rules every function keeps: its body runs inside `catch_unwind`, so no panic crosses into
//! C++ (a panic becomes an error string); errors are returned as strings the caller frees
//! with `inferd_tok_free_string`; pointers are checked for null before use.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use tokenizers::{PaddingStrategy, PostProcessor, Tokenizer, TruncationParams};

/// Opaque to C: a loaded tokenizer.json. `Tokenizer` is `Sync`, so one instance serves every
/// thread's `inferd_tok_encode` at once.
pub struct InferdTokenizer {
    tokenizer: Tokenizer,
}

fn set_error(error: *mut *mut c_char, message: &str) {
    if error.is_null() {
        return;
    }
    // Interior NULs cannot appear in a C string; the message is ours or the crate's text.
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the caller passed a valid `char**` (checked non-null above).
    unsafe { *error = text.into_raw() };
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        format!("tokenizers panicked: {text}")
    } else if let Some(text) = payload.downcast_ref::<String>() {
        format!("tokenizers panicked: {text}")
    } else {
        "tokenizers panicked".to_string()
    }
}

/// Loads a tokenizer.json. Returns null and sets `*error` when the file cannot be read or
/// parsed.
#[no_mangle]
pub extern "C" fn inferd_tok_from_file(
    path: *const c_char,
    error: *mut *mut c_char,
) -> *mut InferdTokenizer {
    let result = catch_unwind(|| -> Result<*mut InferdTokenizer, String> {
        if path.is_null() {
            return Err("null path".to_string());
        }
        // Encoding runs once per row on the caller's threads: no rayon pool beside the
        // server's own threads.
        tokenizers::utils::parallelism::set_parallelism(false);
        // SAFETY: non-null, and the caller passes a NUL-terminated string.
        let path = unsafe { CStr::from_ptr(path) };
        let path = path
            .to_str()
            .map_err(|_| "the path is not UTF-8".to_string())?;
        let tokenizer = Tokenizer::from_file(path).map_err(|e| e.to_string())?;
        Ok(Box::into_raw(Box::new(InferdTokenizer { tokenizer })))
    });
    match result {
        Ok(Ok(tokenizer)) => tokenizer,
        Ok(Err(message)) => {
            set_error(error, &message);
            ptr::null_mut()
        }
        Err(payload) => {
            set_error(error, &panic_message(payload.as_ref()));
            ptr::null_mut()
        }
    }
}

/// What tokenizer.json itself declares about padding and truncation, so the op can honour
/// it as Python's `Tokenizer.encode` does. Each out pointer may be null.
/// `*has_padding`: 1 when a `padding` section exists (then `*pad_id` is its pad_id).
/// `*truncation_max_length`: the `truncation.max_length`, or 0 when there is none.
#[no_mangle]
pub extern "C" fn inferd_tok_declared(
    tok: *const InferdTokenizer,
    has_padding: *mut c_int,
    pad_id: *mut u32,
    truncation_max_length: *mut usize,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        if tok.is_null() {
            return -1;
        }
        // SAFETY: non-null and created by inferd_tok_from_file.
        let tokenizer = unsafe { &(*tok).tokenizer };
        let padding = tokenizer.get_padding();
        // SAFETY: each pointer is checked non-null before it is written.
        unsafe {
            if !has_padding.is_null() {
                *has_padding = c_int::from(padding.is_some());
            }
            if !pad_id.is_null() {
                *pad_id = padding.map_or(0, |p| p.pad_id);
            }
            if !truncation_max_length.is_null() {
                *truncation_max_length = tokenizer.get_truncation().map_or(0, |t| t.max_length);
            }
        }
        0
    }));
    result.unwrap_or(-1)
}

/// Makes every encoding at most `max_length` tokens, as a model with that input length needs:
/// tokenizer.json's own truncation (direction, strategy, stride) is kept with its max_length
/// lowered to `max_length`, or, without one, the crate's default truncation (right, longest
/// first) at `max_length`, which keeps the special tokens the post-processor adds. A declared
/// padding section becomes fixed padding to `max_length` (its pad token and direction kept;
/// `pad_id` replaces its id when `set_pad_id` is nonzero); without one the caller pads.
/// Call once, before the tokenizer is shared between threads. Returns 0, or -1 with *error.
#[no_mangle]
pub extern "C" fn inferd_tok_configure(
    tok: *mut InferdTokenizer,
    max_length: usize,
    set_pad_id: c_int,
    pad_id: u32,
    error: *mut *mut c_char,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        if tok.is_null() {
            return Err("null tokenizer".to_string());
        }
        // SAFETY: non-null, created by inferd_tok_from_file, not yet shared (documented).
        let tokenizer = unsafe { &mut (*tok).tokenizer };
        let added = tokenizer
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false));
        if max_length <= added {
            return Err(format!(
                "max_length {max_length} leaves no room for text: the post-processor adds \
                 {added} special tokens"
            ));
        }
        let mut truncation = tokenizer.get_truncation().cloned().unwrap_or(TruncationParams {
            max_length,
            ..Default::default()
        });
        truncation.max_length = truncation.max_length.min(max_length);
        tokenizer
            .with_truncation(Some(truncation))
            .map_err(|e| e.to_string())?;
        if let Some(mut padding) = tokenizer.get_padding().cloned() {
            padding.strategy = PaddingStrategy::Fixed(max_length);
            padding.pad_to_multiple_of = None;
            if set_pad_id != 0 {
                padding.pad_id = pad_id;
            }
            tokenizer.with_padding(Some(padding));
        }
        Ok(())
    }));
    match result {
        Ok(Ok(())) => 0,
        Ok(Err(message)) => {
            set_error(error, &message);
            -1
        }
        Err(payload) => {
            set_error(error, &panic_message(payload.as_ref()));
            -1
        }
    }
}

/// Encodes `len` bytes of `text` (checked to be UTF-8 here). Returns the token count, or
/// with `*error` set -1 for text that is not UTF-8 (the client's fault) and -2 for any other
/// failure. When the count exceeds `capacity` nothing is written and the caller
/// retries with buffers of that size. `mask` and `type_ids` may be null.
#[no_mangle]
pub extern "C" fn inferd_tok_encode(
    tok: *const InferdTokenizer,
    text: *const u8,
    len: usize,
    add_special: c_int,
    ids: *mut u32,
    mask: *mut u32,
    type_ids: *mut u32,
    capacity: usize,
    error: *mut *mut c_char,
) -> i64 {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<i64, (i64, String)> {
        if tok.is_null() || (text.is_null() && len > 0) {
            return Err((-2, "null tokenizer or text".to_string()));
        }
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: non-null, and the caller guarantees `len` readable bytes.
            unsafe { std::slice::from_raw_parts(text, len) }
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|e| (-1, format!("not UTF-8 (byte {})", e.valid_up_to())))?;
        // SAFETY: non-null and created by inferd_tok_from_file.
        let tokenizer = unsafe { &(*tok).tokenizer };
        let encoding = tokenizer
            .encode(text, add_special != 0)
            .map_err(|e| (-2, e.to_string()))?;
        let count = encoding.get_ids().len();
        if count > capacity {
            return Ok(count as i64);
        }
        if count > 0 && ids.is_null() {
            return Err((-2, "null ids buffer".to_string()));
        }
        let copy = |out: *mut u32, values: &[u32]| {
            if !out.is_null() && !values.is_empty() {
                // SAFETY: the caller guarantees `capacity` >= count writable u32s.
                unsafe { ptr::copy_nonoverlapping(values.as_ptr(), out, values.len()) };
            }
        };
        copy(ids, encoding.get_ids());
        copy(mask, encoding.get_attention_mask());
        copy(type_ids, encoding.get_type_ids());
        Ok(count as i64)
    }));
    match result {
        Ok(Ok(count)) => count,
        Ok(Err((code, message))) => {
            set_error(error, &message);
            code
        }
        Err(payload) => {
            set_error(error, &panic_message(payload.as_ref()));
            -2
        }
    }
}

/// Checks that `len` bytes are UTF-8 with the same check `inferd_tok_encode` makes, for text
/// another tokenizer (SentencePiece, which would replace bad bytes silently) is about to
/// read. Returns -1 when they are, else the offset of the first invalid byte.
#[no_mangle]
pub extern "C" fn inferd_utf8_invalid_at(text: *const u8, len: usize) -> i64 {
    if len == 0 {
        return -1;
    }
    if text.is_null() {
        return 0;
    }
    // SAFETY: non-null, and the caller guarantees `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(text, len) };
    match std::str::from_utf8(bytes) {
        Ok(_) => -1,
        Err(e) => e.valid_up_to() as i64,
    }
}

/// Frees a tokenizer from `inferd_tok_from_file` (null is allowed).
#[no_mangle]
pub extern "C" fn inferd_tok_free(tok: *mut InferdTokenizer) {
    if tok.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: created by Box::into_raw in inferd_tok_from_file, freed once.
        drop(unsafe { Box::from_raw(tok) });
    }));
}

/// Frees an error string set by any function here (null is allowed).
#[no_mangle]
pub extern "C" fn inferd_tok_free_string(text: *mut c_char) {
    if text.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: created by CString::into_raw in set_error, freed once.
        drop(unsafe { CString::from_raw(text) });
    }));
}
