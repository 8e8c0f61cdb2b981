#!/usr/bin/env bash
# Builds the supraseal-c2 peer here, without a GPU: `cuzk-peer` (tools/upstream) with
# bellperson's supraseal-c2 prover behind `seal_commit_phase2` (feature `supraseal`), and
# `cuzk-vs-supraseal` (supraseal-c2 called directly beside cuzk-gpu, one partition), compiled by
# the same pip CUDA compiler as cuzk-gpu, with native sm_90 code added (supraseal builds only
# sm_75/sm_80 by itself, which an H200 would JIT from PTX). Stages it with the CUDA `cuzk` under
# target/peer-carry/ for tools/supraseal-vs-cuzk.sh on the device machine (docs/GPU.md).
#
# neptune's CUDA path links the driver library at build time; a stub libcuda.so.1 (one dummy
# per `cu*` symbol cuda-driver-sys declares) stands in for it here. The device machine's real
# driver replaces it at run time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
NVCC="$(tools/install-cuda.sh)"
export NVCC PATH="$(dirname "$NVCC"):$PATH"
export NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"

cargo fetch --quiet
stub="$root/target/stub-cuda"
mkdir -p "$stub"
driver_sys="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cuda-driver-sys-0.3.* | head -1)"
grep -ohE "pub fn cu[A-Za-z0-9_]+" "$driver_sys"/src/*.rs | sed 's/pub fn //' | sort -u |
  awk '{ printf "int %s(void) { return 100; }\nint %s_v2(void) { return 100; }\n", $1, $1 }' \
    >"$stub/stub.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub/libcuda.so.1" "$stub/stub.c"
ln -sf libcuda.so.1 "$stub/libcuda.so"
export CUDA_LIBRARY_PATH="$stub" LIBRARY_PATH="$stub${LIBRARY_PATH:+:$LIBRARY_PATH}"

# `tools/supraseal-peer.sh 32g` builds and stages only `cuzk-vs-supraseal` (for
# `tools/supraseal-vs-cuzk.sh 32g`); without it, everything both modes need.
bins=(cuzk-vs-supraseal)
[ "${1:-all}" = 32g ] || bins+=(cuzk-peer)
# Without debug info: the workspace's release profile has `debug = 1`, and with it the cc crate
# passes nvcc `-G` (unoptimised device code), which made supraseal's kernels crawl.
CARGO_TARGET_DIR="$root/target/supraseal" RUSTFLAGS="-L $stub" CARGO_PROFILE_RELEASE_DEBUG=false \
  cargo build --release -p cuzk-upstream-tools --features supraseal "${bins[@]/#/--bin=}"
[ "${1:-all}" = 32g ] || cargo build --release -p cuzk-daemon --features cuda --bin cuzk

# The binaries are 75 MB or more stripped, over the device tool's 64 MiB carry: ship them as xz.
stage=target/peer-carry
rm -rf "$stage"
mkdir -p "$stage/bin"
for b in "${bins[@]}"; do cp "target/supraseal/release/$b" "$stage/bin/"; done
[ ! -e "$stage/bin/cuzk-peer" ] || mv "$stage/bin/cuzk-peer" "$stage/bin/cuzk-peer-supraseal"
[ "${1:-all}" = 32g ] || cp target/release/cuzk "$stage/bin/cuzk"
strip --strip-all "$stage"/bin/*
tar cf - -C "$stage" bin | xz -T2 -6 >"$stage/bin.tar.xz"
rm -r "$stage/bin"
ls -la "$stage" >&2
du -sh "$stage" >&2
echo "device command (carry $stage): bash tools/supraseal-vs-cuzk.sh${1:+ $1}"
