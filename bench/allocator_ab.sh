#!/usr/bin/env bash
# Measures the allocator choice on the same models and requests (bench/binary_ab.sh, rounds
# interleaved so background noise hits every variant alike):
#   jemalloc                the jemalloc-linked build/inferd as it ships (page decay off,
#                           src/server/allocator_config.cc)
#   jemalloc-default-decay  the same binary with MALLOC_CONF set to jemalloc 5.3's own
#                           defaults (dirty pages returned over 10 s, muzzy at once)
#   glibc                   the same code built with glibc malloc (build-glibc/,
#                           -DINFERD_USE_JEMALLOC=OFF; built here when missing)
#
#   bench/allocator_ab.sh [rounds=3] [seconds=8] [batch=1]
#   INFERD_BINARY=/work/main/build/inferd INFERD_DEMO_MODELS=/work/main/build/demo-models \
#     INFERD_GLIBC_BINARY=build-glibc/inferd bench/allocator_ab.sh 2 5 8
#
# Writes bench/results/<date>-allocator-b<batch>.md and .json (RESULT= path without .md
# writes elsewhere). Large batches matter: they allocate the large tensors that glibc may
# return to the kernel.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rounds="${1:-3}"
seconds="${2:-8}"
batch="${3:-1}"
bin="$(realpath "${INFERD_BINARY:-build/inferd}")"
glibc_bin="${INFERD_GLIBC_BINARY:-build-glibc/inferd}"
default_decay="dirty_decay_ms:10000,muzzy_decay_ms:0"

# A new dated file (never over a kept one); refused on a tree with uncommitted changes.
result="$(python3 bench/result_file.py target "allocator-b$batch" "${RESULT:-}")" || exit 2
if [ ! -x "$glibc_bin" ]; then
  torch_dir="$(.venv/bin/python -c 'import torch, os; print(os.path.dirname(torch.__file__))')"
  cmake -S . -B build-glibc -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERD_USE_JEMALLOC=OFF \
    -DINFERD_BUILD_TESTS=OFF -DINFERD_TORCH_DIR="$torch_dir" >/dev/null
  cmake --build build-glibc --target inferd -j2 >/dev/null
  glibc_bin=build-glibc/inferd
fi

RESULT="$result" \
TITLE="Allocator: jemalloc (decay off, as inferd ships), jemalloc's default decay, glibc malloc; batch $batch" \
COMMAND_LINE="bench/allocator_ab.sh $rounds $seconds $batch (INFERD_BINARY=$bin, INFERD_GLIBC_BINARY=$glibc_bin)" \
  exec bench/binary_ab.sh "$rounds" "$seconds" "$batch" "jemalloc|$bin" \
    "jemalloc-default-decay|$bin|MALLOC_CONF=$default_decay" "glibc|$glibc_bin"
