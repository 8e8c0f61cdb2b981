#!/usr/bin/env bash
# Crashes: KILLS (default 24) rounds of: submit a 2 KiB job, wait a random 0.5-20 s, SIGKILL
# the daemon, restart it on the same store. Afterwards every accepted job must end completed
# (its proof accepted by upstream verify_seal) or failed with a reason: none lost.
source "$(dirname "$0")/common.sh"
OUT=${OUT:-$PWD/.cache/reliability/kills}
KILLS=${KILLS:-24}
rm -rf "$OUT"; mkdir -p "$OUT/proofs"
build
addr="unix://$OUT/cuzk.sock"
c1=fixtures/porep/2KiB/c1.json
: >"$OUT/jobs.txt"
start_daemon "$OUT"
for round in $(seq "$KILLS"); do
  prio=$(shuf -n1 -e low normal high critical)
  $CUZK submit --addr "$addr" --c1 "$c1" --request-id "kill-$round" --priority "$prio" \
    | awk '{print $1}' >>"$OUT/jobs.txt"
  sleep "$(awk -v r=$RANDOM 'BEGIN{printf "%.1f", 0.5 + (r % 196) / 10}')"
  kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
  echo "round $round: killed" >>"$OUT/rounds.txt"
  start_daemon "$OUT"
done
result=$(await_jobs "$addr" "$OUT/jobs.txt" "$OUT/proofs" "kills: rounds=$KILLS accepted=$(wc -l <"$OUT/jobs.txt")")
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true
$PEER verify --fixture fixtures/porep/2KiB --params "$PARAMS" --proofs "$OUT/proofs" | tee "$OUT/verify.txt"
echo "$result" | tee "$OUT/summary.txt"
