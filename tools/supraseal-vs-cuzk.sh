#!/usr/bin/env bash
# On the device machine, one call: 2 KiB PoRep C2 on one GPU, supraseal-c2 against cuzk, on the
# same C1 output (fixtures/porep/2KiB) and the same parameters (`cuzk paramgen`), in one run.
# Needs tools/supraseal-peer.sh's stage (carry target/peer-carry).
#
#   supraseal  upstream `seal_commit_phase2` with bellperson's supraseal-c2 prover, RUNS calls in
#              one process (the first loads the parameters; later calls find them cached)
#   cuzk-cli   `cuzk prove porep --backend gpu`, one process per proof (loads the parameters)
#   cuzk-warm  the engine with the key resident (`cuzk bench --in-process batch`, one job at a
#              time), as a daemon serves Curio
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp}"
bin=/tmp/peer-carry/bin
mkdir -p /tmp/peer-carry
[ -x "$bin/cuzk" ] || tar xJf target/peer-carry/bin.tar.xz -C /tmp/peer-carry
params="${PARAMS:-/tmp/cuzk-params}"
runs="${RUNS:-5}"
fixture=fixtures/porep/2KiB
log="$out/supraseal-vs-cuzk.log"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  mkdir -p "$params"
  "$bin/cuzk" paramgen porep --sector-size 2KiB --out "$params" | tail -1
  for i in $(seq "$runs"); do
    "$bin/cuzk" prove porep --c1 "$fixture/c1.json" --params "$params" --backend gpu \
      --out "$out/proof-cuzk" | grep '^prove'
  done
  CUZK_ENGINE_BACKEND=gpu CUZK_LOG_LEVEL=warn "$bin/cuzk" bench --in-process --params "$params" \
    --quiet batch --count "$((4 * runs))" --concurrency 1
  # Last, and bounded: a peer that hangs must not cost the figures above.
  timeout "${PEER_TIMEOUT:-180}" "$bin/cuzk-peer-supraseal" c2 --fixture "$fixture" \
    --params "$params" --runs "$runs" || echo "supraseal peer: exit status $?"
} 2>&1 | tee "$log"
s=$(grep '^upstream c2 run=' "$log" | grep -v 'run=0 ' | sed 's/.*total_ms=\([0-9]*\).*/\1/' | median)
s0=$(grep '^upstream c2 run=0 ' "$log" | sed 's/.*total_ms=\([0-9]*\).*/\1/')
c=$(grep '^prove porep' "$log" | sed 's/.*total_ms=\([0-9]*\).*/\1/' | median)
w=$(grep '^total ' "$log" | awk '{print $2}')
echo "2KiB C2 median total_ms: supraseal=$s (first call $s0) cuzk-cli=$c cuzk-warm=$w" | tee -a "$log"
