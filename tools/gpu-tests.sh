#!/usr/bin/env bash
# Builds cuzk-gpu's test and bench binaries and the CUDA-enabled `cuzk` here (no GPU needed)
# with the pip CUDA compiler, stages them with a runner under target/gpu-carry/, and prints the
# one device command that runs the tests on the GPU machine (ignored GPU tests included);
# tools/multi-gpu-bench.sh uses the same stage. See docs/GPU.md. CUZK_GPU_FAST=1 builds only
# the `gpu` test and bench binaries (no daemon): about 8 min instead of 11, for kernel work.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
NVCC="$(tools/install-cuda.sh)"
export NVCC
stage=target/gpu-carry
rm -rf "$stage"
mkdir -p "$stage"
build() {
  cargo "$@" -p cuzk-gpu --features cuda --no-run --message-format=json-render-diagnostics \
    | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["kind"][0], m["target"]["name"], m["executable"])
'
}
if [ "${CUZK_GPU_FAST:-0}" = 1 ]; then
  only=(--test gpu) only_bench=(--bench gpu)
else
  only=() only_bench=()
fi
{ build test --release "${only[@]}"; build bench "${only_bench[@]}"; } \
  | while read -r kind name exe; do
  cp "$exe" "$stage/$kind-$name"
  strip --strip-all "$stage/$kind-$name"
done
if [ "${CUZK_GPU_FAST:-0}" != 1 ]; then
  cargo build --release -p cuzk-daemon --features cuda --bin cuzk
  cp target/release/cuzk "$stage/cuzk"
  strip --strip-all "$stage/cuzk"
fi
# Each binary carries device code for four architectures; packed, they fit the device tool's
# 64 MiB carry. unpack.sh restores them on the device (run.sh and multi-gpu-bench.sh call it).
(cd "$stage" && XZ_OPT=-T2 tar -cJf bin.tar.xz -- * && find . -type f ! -name bin.tar.xz -delete)
cat > "$stage/unpack.sh" <<'UNPACK'
#!/usr/bin/env bash
# Unpacks the staged binaries next to this script, once.
d="$(dirname "$0")"
[ -x "$d/bench-gpu" ] || tar -xJf "$d/bin.tar.xz" -C "$d"
UNPACK
cat > "$stage/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs every staged GPU test (ignored ones included), then the GPU benchmark. Output goes to
# stdout and, when $OUT is set, to $OUT/gpu-tests.log.
cd "$(dirname "$0")/../.."
bash target/gpu-carry/unpack.sh
log="${OUT:-/tmp}/gpu-tests.log"
rc=0
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
  for t in target/gpu-carry/test-* target/gpu-carry/lib-*; do
    [ -x "$t" ] || continue
    echo "== $t"
    "$t" --include-ignored --test-threads=1 --nocapture || rc=1
  done
  if [ "${CUZK_SKIP_BENCH:-0}" != 1 ]; then
    echo "== bench"
    target/gpu-carry/bench-gpu || rc=1
  fi
  echo "exit status $rc"
} 2>&1 | tee "$log"
exit $rc
RUN
chmod +x "$stage/run.sh"
ls -la "$stage" >&2
du -sh "$stage" >&2
echo "device command (carry target/gpu-carry): bash target/gpu-carry/run.sh"
