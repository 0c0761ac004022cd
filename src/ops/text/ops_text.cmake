# Text ops (ops/text): `op: tokenize` over the Hugging Face `tokenizers` crate, compiled by
# cargo from src/rust/tokenizers_ffi into a static library behind a C ABI. Depends on core only.
#
# Cargo: rustup's (~/.cargo/bin) or Debian's cargo-web/rustc-web (bookworm, 1.96, installs
# /usr/bin/cargo); scripts/setup installs one and runs `cargo fetch --locked`, so the build
# itself runs --offline.
find_program(INFERD_CARGO NAMES cargo HINTS "$ENV{HOME}/.cargo/bin" /usr/bin REQUIRED)
# One compiled copy shared by build/, build-fuzz/ and every worktree or clone on the machine
# (--locked makes the sharing safe: every user builds the same Cargo.lock).
set(INFERD_CARGO_TARGET_DIR "$ENV{HOME}/.cache/inferd/cargo" CACHE PATH
    "CARGO_TARGET_DIR for src/rust crates")
set(INFERD_TOKENIZERS_FFI_DIR ${CMAKE_CURRENT_SOURCE_DIR}/rust/tokenizers_ffi)
set(INFERD_TOKENIZERS_FFI_LIB ${INFERD_CARGO_TARGET_DIR}/release/libinferd_tokenizers_ffi.a)
add_custom_command(
  OUTPUT ${INFERD_TOKENIZERS_FFI_LIB}
  COMMAND ${CMAKE_COMMAND} -E env CARGO_TARGET_DIR=${INFERD_CARGO_TARGET_DIR}
          ${INFERD_CARGO} build --release --locked --offline
          --manifest-path ${INFERD_TOKENIZERS_FFI_DIR}/Cargo.toml
  DEPENDS ${INFERD_TOKENIZERS_FFI_DIR}/Cargo.toml ${INFERD_TOKENIZERS_FFI_DIR}/Cargo.lock
          ${INFERD_TOKENIZERS_FFI_DIR}/src/lib.rs
  COMMENT "cargo build tokenizers_ffi (Hugging Face tokenizers 0.23.2)"
  USES_TERMINAL)
add_custom_target(inferd_tokenizers_ffi_build DEPENDS ${INFERD_TOKENIZERS_FFI_LIB})
add_library(inferd_tokenizers_ffi STATIC IMPORTED GLOBAL)
# The system libraries Rust's std needs, from `cargo rustc --release -- --print
# native-static-libs` (-lc -lm -lrt -lpthread -lgcc_s -lutil -ldl).
set_target_properties(inferd_tokenizers_ffi PROPERTIES
  IMPORTED_LOCATION ${INFERD_TOKENIZERS_FFI_LIB}
  INTERFACE_INCLUDE_DIRECTORIES ${INFERD_TOKENIZERS_FFI_DIR}/include
  INTERFACE_LINK_LIBRARIES "Threads::Threads;dl;m;rt;util;gcc_s")
add_dependencies(inferd_tokenizers_ffi inferd_tokenizers_ffi_build)

add_library(inferd_ops_text STATIC
  ${CMAKE_CURRENT_LIST_DIR}/hf_tokenizer.cc
  ${CMAKE_CURRENT_LIST_DIR}/register_text_ops.cc
  ${CMAKE_CURRENT_LIST_DIR}/tokenize_op.cc)
target_link_libraries(inferd_ops_text PUBLIC inferd_core PRIVATE inferd_tokenizers_ffi)
add_dependencies(inferd_ops_text inferd_tokenizers_ffi_build)
if(TARGET inferd)
  target_link_libraries(inferd PRIVATE inferd_ops_text)
endif()
if(INFERD_BUILD_TESTS)
  target_link_libraries(inferd_unit_tests PRIVATE inferd_ops_text)
endif()
if(INFERD_BUILD_TESTS)
  # The tiny tokenizer.json files tests/data/tokenizers/make_tokenizers.py writes.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/tokenize_op_test.cc PROPERTIES
    COMPILE_DEFINITIONS INFERD_TOKENIZER_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data/tokenizers")
endif()
