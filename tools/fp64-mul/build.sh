#!/usr/bin/env bash
# Builds the FP64 multiplication microbenchmark (fp64_mul.cu) for sm_90 into target/fp64-carry/
# with the pip nvcc (tools/install-cuda.sh) and sppark's and blst's headers from cargo's registry.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nvcc="$("$root/tools/install-cuda.sh")"
reg=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
sppark=$(ls -d "$reg"sppark-0.1.*/sppark | tail -1)
blst=$(ls -d "$reg"blst-0.3.*/blst/src | tail -1)
mkdir -p "$root/target/fp64-carry"
"$nvcc" -O3 -std=c++17 -arch=sm_90 -I"$sppark" -I"$blst" -DFEATURE_BLS12_381 -D__ADX__ \
  -Xptxas -v "$root/tools/fp64-mul/fp64_mul.cu" -o "$root/target/fp64-carry/fp64-mul" 2>&1 \
  | grep -E "error|warning|registers|entry" || true
test -x "$root/target/fp64-carry/fp64-mul"
