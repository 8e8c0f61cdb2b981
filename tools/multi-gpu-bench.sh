#!/usr/bin/env bash
# Multi-GPU throughput on the device machine, in one call: the same batch of 2 KiB PoRep C2
# jobs through an in-process daemon on GPU 0 alone, then on every GPU (engine.gpus), and the
# 32 GiB-shaped partitions of bench-gpu's multi32g section on 1 GPU, then all. Needs the
# binaries tools/gpu-tests.sh stages (target/gpu-carry/{cuzk,bench-gpu}); see docs/GPU.md.
#
#   bash tools/multi-gpu-bench.sh [2k|32g|all]   (COUNT, CPU_WORKERS, LOOKAHEAD, PARTITIONS tune it)
set -uo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
out="${OUT:-/tmp}"
bin=target/gpu-carry
bash "$bin/unpack.sh"
count="${COUNT:-48}"
params="${PARAMS:-/tmp/cuzk-params}"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
all="[$(seq -s, 0 $((gpus - 1)))]"
nvidia-smi --query-gpu=index,name,memory.total --format=csv
nproc
# Device memory as the driver sees it, for comparison with the engine's planned footprint.
nvidia-smi --query-gpu=timestamp,index,memory.used,utilization.gpu --format=csv -lms 500 \
  >"$out/smi.csv" 2>/dev/null &
smi=$!
trap 'kill $smi 2>/dev/null' EXIT

if [ "$what" = 2k ] || [ "$what" = all ]; then
  mkdir -p "$params"
  t=$(date +%s%N)
  "$bin/cuzk" paramgen porep --sector-size 2KiB --out "$params" || exit 1
  echo "paramgen 2KiB: $((($(date +%s%N) - t) / 1000000)) ms"
  export CUZK_ENGINE_BACKEND=gpu CUZK_ENGINE_CPU_WORKERS="${CPU_WORKERS:-8}"
  export CUZK_ENGINE_LOOKAHEAD="${LOOKAHEAD:-2}" CUZK_LOG_LEVEL=warn
  # A warm-up single proof extracts and caches the PCE, so both runs start equal.
  CUZK_ENGINE_GPUS='[0]' "$bin/cuzk" bench --in-process --params "$params" --quiet single
  for g in '[0]' "$all"; do
    echo "== 2KiB batch of $count on gpus=$g"
    CUZK_ENGINE_GPUS="$g" "$bin/cuzk" bench --in-process --params "$params" --quiet \
      --timeline "$out/timeline-2k-$(echo "$g" | tr -d '[], ').svg" \
      batch --count "$count" --concurrency "$count"
  done
fi
if [ "$what" = 32g ] || [ "$what" = all ]; then
  echo "== 32GiB-shaped partitions"
  CUZK_GPU_BENCH=multi32g CUZK_GPU_BENCH_PARTITIONS="${PARTITIONS:-4}" "$bin/bench-gpu"
fi
