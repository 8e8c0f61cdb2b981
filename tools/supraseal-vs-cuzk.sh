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
#
# With the argument `32g` it runs `cuzk-vs-supraseal` instead: one 32 GiB PoRep partition (the
# real circuit, a synthetic witness and key; see tools/upstream/src/vs_supraseal.rs), both
# provers in one process on the same a, b, c, witness and r, s, their proofs compared byte for
# byte. A 2 KiB pass of the same binary runs first, as a quick check. Host memory: about
# 104 GiB; the synthetic key file goes to /dev/shm (SRS= to change).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp}"
bin=/tmp/peer-carry/bin
mkdir -p /tmp/peer-carry
[ -n "$(ls -A "$bin" 2>/dev/null)" ] || tar xJf target/peer-carry/bin.tar.xz -C /tmp/peer-carry
if [ "${1:-2k}" = 32g ]; then
  srs="${SRS:-/dev/shm/cuzk-vs-supraseal.params}"
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    "$bin/cuzk-vs-supraseal" --sector-size 2KiB --srs "$srs" --runs 3 --batch 2 &&
      "$bin/cuzk-vs-supraseal" --sector-size 32GiB --srs "$srs" --runs "${RUNS:-3}" \
        --batch "${BATCH:-10}"
    echo "exit status $?"
    rm -f "$srs"
  } 2>&1 | tee "$out/supraseal-vs-cuzk-32g.log"
  grep -q '^exit status 0$' "$out/supraseal-vs-cuzk-32g.log"
  exit
fi
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
