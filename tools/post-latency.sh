#!/usr/bin/env bash
# WinningPoSt latency through the daemon, on the GPU machine (carry target/gpu-carry, built by
# tools/gpu-tests.sh): a real key of the 32 GiB WinningPoSt circuit (`cuzk paramgen`, our
# random setup), a random well-formed request (`cuzk random-post`: sparse trees, so the proof
# verifies), the daemon with the GPU backend. Runs: one cold proof (key load, PCE extraction),
# COUNT idle ones one at a time, then COUNT CRITICAL ones while 2 KiB PoRep jobs keep the GPU
# busy (a stand-in load: 32 GiB PoRep needs a 47 GB key this machine cannot make in a call).
# Output in $OUT (or /tmp): post-latency.log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash target/gpu-carry/unpack.sh
C=$PWD/target/gpu-carry/cuzk
W=${WORK:-/tmp/cuzk-post-latency}
COUNT=${COUNT:-10}
LOAD=${LOAD:-64}
log=${OUT:-/tmp}/post-latency.log
rm -rf "$W"; mkdir -p "$W"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  echo "host: $(nproc) cores"
  "$C" paramgen winning-post --sector-size 32GiB --out "$W/params"
  "$C" paramgen porep --sector-size 2KiB --out "$W/params"
  "$C" random-post --registered-proof 3 --out "$W/winning.bin"
  "$C" daemon --listen "unix://$W/c.sock" --params "$W/params" --store "$W/store" > "$W/daemon.log" 2>&1 &
  daemon=$!
  for _ in $(seq 600); do [ -S "$W/c.sock" ] && break; sleep 0.1; done
  b() { "$C" bench --addr "unix://$W/c.sock" --quiet "$@"; }
  echo "== cold (first proof: key load, PCE extraction)"
  b --post "$W/winning.bin" --priority critical single
  echo "== idle, $COUNT one at a time"
  b --post "$W/winning.bin" --priority critical batch --count "$COUNT" --concurrency 1
  echo "== under load: $LOAD 2 KiB PoRep jobs, 8 in flight"
  b batch --count "$LOAD" --concurrency 8 > "$W/load.txt" &
  load=$!
  sleep 5
  b --post "$W/winning.bin" --priority critical batch --count "$COUNT" --concurrency 1
  wait "$load"; cat "$W/load.txt"
  kill "$daemon"; wait "$daemon" || true
} 2>&1 | tee "$log"
