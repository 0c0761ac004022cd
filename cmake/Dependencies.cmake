# Every library comes from Debian 12 packages (scripts/setup installs them), except LibTorch,
# which comes from the pinned PyTorch wheel in the project's virtual environment.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(simdjson REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(GTest REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 of model files (libssl-dev)
find_path(RAPIDJSON_INCLUDE_DIR rapidjson/writer.h REQUIRED)
find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
if(INFERD_USE_JEMALLOC)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
endif()

if(INFERD_NO_ENGINES)
  # The fuzzers link no engine: the engine targets exist (so src/ configures) but stay empty,
  # and the targets that need them are never built in this configuration.
  add_library(inferd_libtorch INTERFACE)
  add_library(inferd_onnxruntime INTERFACE)
  add_library(inferd_llama INTERFACE)
else()
# LibTorch. The wheel's TorchConfig.cmake insists on a CUDA toolkit because the wheel is a
# CUDA build; the CPU path needs only libtorch_cpu and libc10, so they are imported directly.
if(NOT INFERD_TORCH_DIR)
  message(FATAL_ERROR "Set INFERD_TORCH_DIR to the torch package folder (scripts/setup does)")
endif()
add_library(inferd_libtorch INTERFACE)
target_include_directories(inferd_libtorch SYSTEM INTERFACE
  "${INFERD_TORCH_DIR}/include"
  "${INFERD_TORCH_DIR}/include/torch/csrc/api/include")
target_link_libraries(inferd_libtorch INTERFACE
  "${INFERD_TORCH_DIR}/lib/libtorch_cpu.so"
  "${INFERD_TORCH_DIR}/lib/libc10.so")
target_compile_definitions(inferd_libtorch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
set(CMAKE_BUILD_RPATH "${INFERD_TORCH_DIR}/lib")
# ONNX Runtime (the onnx backend): the official CPU library and C API header that
# scripts/setup-onnxruntime fetches and checksums into third_party/.
set(INFERD_ORT_DIR "${CMAKE_SOURCE_DIR}/third_party/onnxruntime-1.23.2" CACHE PATH
  "ONNX Runtime folder with include/onnxruntime_c_api.h and lib/libonnxruntime.so")
if(NOT EXISTS "${INFERD_ORT_DIR}/include/onnxruntime_c_api.h")
  message(FATAL_ERROR "ONNX Runtime not found in ${INFERD_ORT_DIR}: run scripts/setup-onnxruntime")
endif()
add_library(inferd_onnxruntime INTERFACE)
target_include_directories(inferd_onnxruntime SYSTEM INTERFACE "${INFERD_ORT_DIR}/include")
target_link_libraries(inferd_onnxruntime INTERFACE "${INFERD_ORT_DIR}/lib/libonnxruntime.so")
list(APPEND CMAKE_BUILD_RPATH "${INFERD_ORT_DIR}/lib")

# llama.cpp (the llama backend), as the pinned llama-cpp-python wheel built it: its headers
# (site-packages/include) and shared libraries (site-packages/llama_cpp/lib), found next to
# torch in the same site-packages. Its Jinja engine (common/jinja), which the wheel does not
# install, is compiled from the same release's source, which scripts/setup-llama-source
# unpacks into third_party/.
get_filename_component(INFERD_SITE_PACKAGES "${INFERD_TORCH_DIR}" DIRECTORY)
set(INFERD_LLAMA_DIR "${INFERD_SITE_PACKAGES}" CACHE PATH
  "site-packages with include/llama.h and llama_cpp/lib/libllama.so (pip install llama-cpp-python)")
set(INFERD_LLAMA_SRC_DIR "${CMAKE_SOURCE_DIR}/third_party/llama.cpp-0.3.36" CACHE PATH
  "llama.cpp source of the same release (scripts/setup-llama-source)")
if(NOT EXISTS "${INFERD_LLAMA_DIR}/include/llama.h")
  message(FATAL_ERROR "llama.cpp not found in ${INFERD_LLAMA_DIR}: pip install -r requirements.txt")
endif()
if(NOT EXISTS "${INFERD_LLAMA_SRC_DIR}/common/chat.cpp")
  message(FATAL_ERROR "llama.cpp source not found in ${INFERD_LLAMA_SRC_DIR}: run scripts/setup-llama-source")
endif()
add_library(inferd_llama INTERFACE)
target_include_directories(inferd_llama SYSTEM INTERFACE "${INFERD_LLAMA_DIR}/include")
target_link_libraries(inferd_llama INTERFACE
  "${INFERD_LLAMA_DIR}/llama_cpp/lib/libllama.so"
  "${INFERD_LLAMA_DIR}/llama_cpp/lib/libggml.so"
  "${INFERD_LLAMA_DIR}/llama_cpp/lib/libggml-base.so")
list(APPEND CMAKE_BUILD_RPATH "${INFERD_LLAMA_DIR}/llama_cpp/lib")
endif()

# gRPC and Protocol Buffers (Debian's libgrpc++-dev, protobuf-compiler-grpc): the gRPC
# frontend and the C++ client. The stubs are generated from proto/ at build time.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(INFERD_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
