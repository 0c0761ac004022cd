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

# SentencePiece (.model files): Debian's libsentencepiece 0.1.97 carries its own protobuf-lite
# 3.14 and exports it; gRPC's libprotobuf 3.21 is in inferd's global scope, so linked directly
# SentencePiece binds to 3.21 and aborts at the first Load. It runs in a module of its own,
# dlopen'ed RTLD_LOCAL beside a copy of libsentencepiece.so.0 marked DF_SYMBOLIC (what
# -Bsymbolic sets, make_symbolic_copy.py), so that it binds to its own protobuf first;
# docs/text-ops.md weighs the other ways. The module's RUNPATH $ORIGIN finds the copy, which
# sentencepiece_tokenizer.cc also opens first by its path.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece=0.1.97)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(INFERD_SENTENCEPIECE_DIR ${CMAKE_BINARY_DIR}/sentencepiece)
find_library(INFERD_SENTENCEPIECE_SO NAMES libsentencepiece.so.0
  HINTS ${SENTENCEPIECE_LIBRARY_DIRS} REQUIRED)
set(INFERD_SENTENCEPIECE_COPY ${INFERD_SENTENCEPIECE_DIR}/libsentencepiece.so.0)
add_custom_command(
  OUTPUT ${INFERD_SENTENCEPIECE_COPY}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${INFERD_SENTENCEPIECE_DIR}
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/make_symbolic_copy.py
          ${INFERD_SENTENCEPIECE_SO} ${INFERD_SENTENCEPIECE_COPY}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/make_symbolic_copy.py ${INFERD_SENTENCEPIECE_SO}
  COMMENT "libsentencepiece.so.0 copied, marked DF_SYMBOLIC")
add_custom_target(inferd_sentencepiece_copy DEPENDS ${INFERD_SENTENCEPIECE_COPY})
add_library(inferd_sentencepiece_shim MODULE ${CMAKE_CURRENT_LIST_DIR}/sentencepiece_shim.cc)
target_include_directories(inferd_sentencepiece_shim PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(inferd_sentencepiece_shim PRIVATE PkgConfig::SENTENCEPIECE)
target_link_options(inferd_sentencepiece_shim PRIVATE -Wl,-Bsymbolic -Wl,--enable-new-dtags)
set_target_properties(inferd_sentencepiece_shim PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${INFERD_SENTENCEPIECE_DIR}
  BUILD_RPATH "$ORIGIN" INSTALL_RPATH "$ORIGIN")
add_dependencies(inferd_sentencepiece_shim inferd_sentencepiece_copy)
if(INFERD_BUILD_FUZZERS)
  # Like the engines, SentencePiece runs uninstrumented in the sanitized tree: a dlopen'ed
  # module cannot count on the executable exporting libFuzzer's coverage callbacks.
  target_compile_options(inferd_sentencepiece_shim PRIVATE -fno-sanitize=all
    -fno-sanitize=fuzzer-no-link)
  target_link_options(inferd_sentencepiece_shim PRIVATE -fno-sanitize=all)
endif()

add_library(inferd_ops_text STATIC
  ${CMAKE_CURRENT_LIST_DIR}/hf_tokenizer.cc
  ${CMAKE_CURRENT_LIST_DIR}/register_text_ops.cc
  ${CMAKE_CURRENT_LIST_DIR}/sentencepiece_tokenizer.cc
  ${CMAKE_CURRENT_LIST_DIR}/tokenize_op.cc)
# Only this file's command line carries the path (the other objects stay cached).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/sentencepiece_tokenizer.cc PROPERTIES
  COMPILE_DEFINITIONS INFERD_SENTENCEPIECE_SHIM_PATH="$<TARGET_FILE:inferd_sentencepiece_shim>")
target_link_libraries(inferd_ops_text PUBLIC inferd_core
  PRIVATE inferd_tokenizers_ffi ${CMAKE_DL_LIBS})
add_dependencies(inferd_ops_text inferd_tokenizers_ffi_build inferd_sentencepiece_shim)
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
