#!/usr/bin/env bash
# Soak: DURATION seconds (default 1200) of continuous 2 KiB submissions through the daemon's unix
# socket, CONCURRENCY in flight, mixed priorities, a CANCEL fraction cancelled at a random
# point. The bench's exactly-once check fails the run if any job is lost or reported twice.
# RSS and open file descriptors are compared after warm-up and after the run.
source "$(dirname "$0")/common.sh"
OUT=${OUT:-$PWD/.cache/reliability/soak}
DURATION=${DURATION:-1200}
CONCURRENCY=${CONCURRENCY:-4}
CANCEL=${CANCEL:-0.3}
rm -rf "$OUT"; mkdir -p "$OUT"
build
start_daemon "$OUT"
sample "$DAEMON_PID" "$OUT/rss.txt" &
addr="unix://$OUT/cuzk.sock"
rss() { awk '/VmRSS/{print $2}' "/proc/$DAEMON_PID/status"; }
fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
# Warm-up: parameters and PCE loaded, allocator pools grown.
$CUZK bench --addr "$addr" batch --count 4 --concurrency "$CONCURRENCY" --quiet >"$OUT/warmup.txt"
sleep 2
warm_rss=$(rss); warm_fds=$(fds)
$CUZK bench --addr "$addr" stress --duration-secs "$DURATION" --concurrency "$CONCURRENCY" \
  --cancel-fraction "$CANCEL" --quiet | tee "$OUT/bench.txt"
sleep 2
end_rss=$(rss); end_fds=$(fds)
$CUZK status --addr "$addr" >"$OUT/status.txt"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true
growth=$(awk "BEGIN{printf \"%.2f\", ($end_rss-$warm_rss)*100/$warm_rss}")
echo "soak: duration_s=$DURATION warm_rss_kib=$warm_rss end_rss_kib=$end_rss growth_pct=$growth warm_fds=$warm_fds end_fds=$end_fds" | tee "$OUT/summary.txt"
