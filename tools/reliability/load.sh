#!/usr/bin/env bash
# Load: 50 concurrent 2 KiB PoRep jobs through the daemon's unix socket, mixed priorities, with
# the engine's memory budget (BUDGET, 6 GiB: the 1.22 GB of resident 2 KiB parameters and PCE
# plus four 1.16 GB partition working sets, as the engine accounts them). Every job must
# complete, upstream verify_seal must accept every proof, and the daemon's peak RSS (sampled
# from /proc every 200 ms) is reported against the budget. Results in $OUT.
source "$(dirname "$0")/common.sh"
OUT=${OUT:-$PWD/.cache/reliability/load}
JOBS=${JOBS:-50}
BUDGET=${BUDGET:-6GiB}
rm -rf "$OUT"; mkdir -p "$OUT"
build
CUZK_ENGINE_BUDGET=$BUDGET start_daemon "$OUT"
sample "$DAEMON_PID" "$OUT/rss.txt" &
$CUZK bench --addr "unix://$OUT/cuzk.sock" batch --count "$JOBS" --concurrency "$JOBS" \
  --mixed-priorities --save-proofs "$OUT/proofs" --quiet | tee "$OUT/bench.txt"
$CUZK metrics --addr "unix://$OUT/cuzk.sock" >"$OUT/metrics.txt" || true
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true
$PEER verify --fixture fixtures/porep/2KiB --params "$PARAMS" --proofs "$OUT/proofs" | tee "$OUT/verify.txt"
peak=$(sort -n -k2 "$OUT/rss.txt" | tail -1 | awk '{printf "%.2f", $2/1048576}')
echo "load: jobs=$JOBS budget=$BUDGET peak_rss_gib=$peak proofs=$(ls "$OUT/proofs" | wc -l)" | tee -a "$OUT/summary.txt"
