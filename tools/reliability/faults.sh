#!/usr/bin/env bash
# Faults:
#  1. Full disk: the daemon runs with every file capped at LIMIT_FSIZE KiB (RLIMIT_FSIZE), on a
#     parameter folder without a PCE cache, so both the job store and the 105 MB PCE cache hit
#     the limit. Submissions past the limit must be refused with a clear error, every accepted
#     job must end completed or failed with a reason, and after a restart without the limit the
#     store must open with every accepted job intact and keep accepting work.
#  2. Corrupted parameters: a truncated .params and one with a flipped byte inside a point.
source "$(dirname "$0")/common.sh"
OUT=${OUT:-$PWD/.cache/reliability/faults}
LIMIT=${LIMIT_FSIZE_KIB:-2048}
SUBMITS=${SUBMITS:-30}
rm -rf "$OUT"; mkdir -p "$OUT/params" "$OUT/proofs"
build
id=stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f
for ext in params vk meta; do ln -s "$PARAMS/v28-$id.$ext" "$OUT/params/"; done
addr="unix://$OUT/cuzk.sock"
c1=fixtures/porep/2KiB/c1.json

echo "== full disk: files capped at $LIMIT KiB" | tee "$OUT/summary.txt"
LIMIT_FSIZE=$LIMIT DAEMON_PARAMS=$OUT/params start_daemon "$OUT"
: >"$OUT/jobs.txt"; refused=0
for i in $(seq "$SUBMITS"); do
  if r=$($CUZK submit --addr "$addr" --c1 "$c1" --request-id "full-$i" 2>&1); then
    echo "$r" | awk '{print $1}' >>"$OUT/jobs.txt"
  else
    refused=$((refused + 1)); echo "$r" >>"$OUT/refused.txt"
  fi
done
echo "submitted=$SUBMITS accepted=$(wc -l <"$OUT/jobs.txt") refused=$refused" | tee -a "$OUT/summary.txt"
[ -s "$OUT/refused.txt" ] && echo "first refusal: $(head -1 "$OUT/refused.txt")" | tee -a "$OUT/summary.txt"
await_jobs "$addr" "$OUT/jobs.txt" "$OUT/proofs" "under the limit" | tee -a "$OUT/summary.txt"
[ -s "$OUT/failed.txt" ] && echo "first failure: $(head -1 "$OUT/failed.txt")" | tee -a "$OUT/summary.txt"
echo "daemon alive under the limit: $(kill -0 "$DAEMON_PID" 2>/dev/null && echo yes || echo no)" | tee -a "$OUT/summary.txt"
echo "PCE files left in params: $(ls "$OUT/params" | grep -c pce || true)" | tee -a "$OUT/summary.txt"
# The disk has room again (the limit lifted on the running daemon): it must accept and prove
# without a restart.
prlimit --pid "$DAEMON_PID" --fsize=unlimited:unlimited
if r=$($CUZK submit --addr "$addr" --c1 "$c1" --request-id room-again 2>&1); then
  echo "after the limit is lifted, no restart: $($CUZK await --addr "$addr" "$(echo "$r" | awk '{print $1}')" --out "$OUT/proofs/room-again.proof" 2>&1)" | tee -a "$OUT/summary.txt"
else
  echo "after the limit is lifted, no restart: refused: $r" | tee -a "$OUT/summary.txt"
fi
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true
LIMIT_FSIZE= DAEMON_PARAMS=$OUT/params start_daemon "$OUT"
rm -f "$OUT/failed.txt"
await_jobs "$addr" "$OUT/jobs.txt" "$OUT/proofs" "after a restart" | tee -a "$OUT/summary.txt"
$CUZK submit --addr "$addr" --c1 "$c1" --request-id after-restart | awk '{print $1}' >"$OUT/after.txt"
$CUZK await --addr "$addr" "$(cat "$OUT/after.txt")" --out "$OUT/proofs/after.proof" | tee -a "$OUT/summary.txt"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true
$PEER verify --fixture fixtures/porep/2KiB --params "$PARAMS" --proofs "$OUT/proofs" | tee -a "$OUT/summary.txt"

echo "== corrupted parameters" | tee -a "$OUT/summary.txt"
bad=$OUT/bad; mkdir -p "$bad"
for ext in vk meta; do ln -s "$PARAMS/v28-$id.$ext" "$bad/"; done
size=$(stat -c %s "$PARAMS/v28-$id.params")
head -c $((size - 1000)) "$PARAMS/v28-$id.params" >"$bad/v28-$id.params"
prove() { $CUZK prove porep --c1 "$c1" --params "$bad" --out "$OUT/bad.proof" --synthesis full "$@" 2>&1 | tail -1; }
echo "truncated by 1000 bytes: $(prove)" | tee -a "$OUT/summary.txt"
cp "$PARAMS/v28-$id.params" "$bad/v28-$id.params"
# A byte in the middle of the file: inside the coordinates of some point.
printf '\x5a' | dd of="$bad/v28-$id.params" bs=1 seek=$((size / 2 + 17)) conv=notrunc status=none
echo "flipped byte, --check-params on-curve: $(prove --check-params on-curve)" | tee -a "$OUT/summary.txt"
echo "flipped byte, --check-params trusted: $(prove --check-params trusted)" | tee -a "$OUT/summary.txt"
rm -rf "$bad"
