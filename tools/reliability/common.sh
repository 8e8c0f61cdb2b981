# Shared by the reliability scripts: build, parameters, a daemon with RSS/fd sampling.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
CUZK=./target/release/cuzk
PEER=./target/release/cuzk-peer
PARAMS=${PARAMS:-$PWD/.cache/params}
export FIL_PROOFS_PARENT_CACHE=$PWD/.cache/parents

build() {
  cargo build --release --bin cuzk -p cuzk-daemon --bin cuzk-peer -p cuzk-upstream-tools
  if ! ls "$PARAMS"/v28-stacked-proof-of-replication-*-032d3138*.params >/dev/null 2>&1; then
    $CUZK paramgen porep --sector-size 2KiB --out "$PARAMS"
  fi
}

# start_daemon <dir> [extra daemon args...]: starts `cuzk daemon` on <dir>/cuzk.sock with its
# store in <dir>/store, logging to <dir>/daemon.log; sets DAEMON_PID and waits for the socket.
start_daemon() {
  local dir=$1; shift
  rm -f "$dir/cuzk.sock"
  # LIMIT_FSIZE (KiB, optional) caps every file the daemon writes, as a full disk would.
  (
    if [ -n "${LIMIT_FSIZE:-}" ]; then ulimit -S -f "$LIMIT_FSIZE"; fi
    exec $CUZK daemon --listen "unix://$dir/cuzk.sock" --params "${DAEMON_PARAMS:-$PARAMS}" \
      --store "$dir/store" "$@" >>"$dir/daemon.log" 2>&1
  ) &
  DAEMON_PID=$!
  for _ in $(seq 600); do
    [ -S "$dir/cuzk.sock" ] && return 0
    kill -0 "$DAEMON_PID" 2>/dev/null || { echo "daemon exited"; tail "$dir/daemon.log"; return 1; }
    sleep 0.1
  done
  echo "daemon did not start"; return 1
}

# sample <pid> <file>: appends "unix_time rss_kib fds" every 200 ms while <pid> lives.
sample() {
  local pid=$1 file=$2
  while kill -0 "$pid" 2>/dev/null; do
    local rss fds
    rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    [ -n "$rss" ] && echo "$(date +%s.%N) $rss $fds" >>"$file"
    sleep 0.2
  done
}

# await_jobs <addr> <jobs file> <proof dir> <label>: awaits every job id in the file; a job ends
# completed (proof written to <proof dir>), failed with a reason (kept in <proof dir>/../failed.txt)
# or lost (no terminal answer: <proof dir>/../lost.txt). Prints "<label>: completed=… failed=…
# lost=…".
await_jobs() {
  local addr=$1 jobs=$2 proofs=$3 label=$4 completed=0 failed=0 lost=0 out
  while read -r job; do
    if out=$($CUZK await --addr "$addr" "$job" --out "$proofs/$job.proof" 2>&1); then
      completed=$((completed + 1))
    elif echo "$out" | grep -q "FAILED"; then
      failed=$((failed + 1)); echo "$out" | head -1 >>"$proofs/../failed.txt"
    else
      lost=$((lost + 1)); echo "$job: $out" >>"$proofs/../lost.txt"
    fi
  done <"$jobs"
  echo "$label: completed=$completed failed=$failed lost=$lost"
}
