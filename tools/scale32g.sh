#!/usr/bin/env bash
# [scale] Whole 32 GiB jobs through the daemon on one GPU host (docs/PERFORMANCE.md, "Whole
# 32 GiB PoRep jobs through the daemon"). $KIND is porep (the default), window-post or snap.
# Binaries staged by `tools/scale32g.sh stage` here (cuzk with --features cuda, upstream's
# cuzk-peer); on the device, in this order:
#
#   setup   a real 32 GiB key of the kind's circuit (`cuzk paramgen --gpu`; PoRep about 3 min,
#           47 GB), a random input whose proofs verify (`cuzk random-c1`, a sealed sector;
#           `random-post`, one WindowPoSt partition; `random-snap`, a 16-partition update), and
#           with PCE=1 the circuit's PCE (else the daemon's first job extracts it: PoRep 80 s,
#           WindowPoSt about 5 min).
#           With WINNING=1 also a 32 GiB WinningPoSt key and request beside it.
#           With SEEDED=1 no key is written: the daemon makes the same key (seed 32) in memory
#           on its first job (engine.seeded_keys; a 32 GiB WindowPoSt key is 60.7 GB, more
#           than the device's disk) and writes only its .vk.
#   run     `cuzk daemon` (GPU backend, defaults; its peak RSS read at the end): one proof alone, then
#           $COUNT proofs at each of $LEVELS in flight through `cuzk bench` (every proof is
#           verified by the daemon before it returns; the bench checks each comes back once).
#           With WINNING=N, then N CRITICAL WinningPoSt proofs one at a time while 4 jobs of
#           $KIND run 4 in flight (the latency an operator sees under sealing load).
#   verify  PoRep: upstream `verify_seal` (cuzk-peer) on the saved proofs, against the key's
#           .vk.
#
# The work folder ($WORK) must survive between phases: one device machine, calls back to back.
# Logs and timelines go to $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/scale-carry
work=${WORK:-/tmp/scale32g}
out=${OUT:-/tmp}
params=$work/params
sector=$work/sector
sock=$work/cuzk.sock
kind=${KIND:-porep}
case "$kind" in
porep) input=(--c1 "$sector/c1.json") ;;
window-post) input=(--post "$sector/request.bin") ;;
snap) input=(--snap "$sector/request.bin") ;;
*) echo "KIND: porep, window-post or snap" >&2; exit 2 ;;
esac
case "${1:-}" in
stage)
  rm -rf "$bin" && mkdir -p "$bin"
  # The peer (tools/supraseal-peer.sh builds it) only for `verify`.
  files=(cuzk)
  [ -x target/release/cuzk-peer ] && files+=(cuzk-peer)
  for f in "${files[@]}"; do cp "target/release/$f" "$bin/" && strip --strip-all "$bin/$f"; done
  (cd "$bin" && XZ_OPT=-T2 tar -cJf bin.tar.xz "${files[@]}" && rm "${files[@]}")
  du -sh "$bin"
  ;;
setup)
  [ -x "$bin/cuzk" ] || tar -xJf "$bin/bin.tar.xz" -C "$bin"
  mkdir -p "$params" "$sector"
  # The key on the GPU, the sector and the PCE on the host's other cores meanwhile (each
  # records the circuit on one thread).
  if [ "${SEEDED:-0}" = 1 ]; then
    : > "$out/paramgen.log"
    key=
  else
    /usr/bin/time -v "$bin/cuzk" paramgen "$kind" --sector-size 32GiB --out "$params" --gpu 0 \
      --seed 32 > "$out/paramgen.log" 2>&1 &
    key=$!
  fi
  case "$kind" in
  porep) "$bin/cuzk" random-c1 --sector-size 32GiB --seed 1 --out "$sector" ;;
  window-post) "$bin/cuzk" random-post --registered-proof 13 --out "$sector/request.bin" ;;
  snap) "$bin/cuzk" random-snap --registered-proof 3 --out "$sector/request.bin" ;;
  esac | tee "$out/random-input.log"
  if [ "${WINNING:-0}" = 1 ]; then
    "$bin/cuzk" paramgen winning-post --sector-size 32GiB --out "$params" --seed 33
    "$bin/cuzk" random-post --registered-proof 3 --out "$sector/winning.bin"
  fi
  if [ "${PCE:-0}" = 1 ]; then
    # Into the parameters' directory, under the name the daemon looks for.
    /usr/bin/time -v "$bin/cuzk" pce extract "$kind" --sector-size 32GiB \
      --out "$params" > "$out/pce.log" 2>&1
    grep -E "pce extract|pce write|Elapsed|Maximum resident" "$out/pce.log"
  fi
  [ -z "$key" ] || wait "$key"
  tail -30 "$out/paramgen.log"
  df -h "$work" | tee "$out/disk.log"
  ;;
run)
  [ -x "$bin/cuzk" ] || tar -xJf "$bin/bin.tar.xz" -C "$bin"
  rm -rf "$sock" "$work/store" "$work"/proofs-*
  seeded=()
  [ "${SEEDED:-0}" = 1 ] && seeded=(CUZK_ENGINE_SEEDED_KEYS=32)
  env "${seeded[@]}" "$bin/cuzk" daemon --listen "unix://$sock" --params "$params" \
    --store "$work/store" > "$out/daemon.log" 2>&1 &
  daemon=$!
  for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
  # Each bench is cut off after $LIMIT s ($LIMIT_SINGLE for the first, which loads the key
  # and PCE), so that the logs come back within a device call.
  bench() {
    local limit=${LIMIT:-900}
    [ "$1" = single ] && limit=${LIMIT_SINGLE:-$limit}
    timeout "$limit" "$bin/cuzk" bench --addr "unix://$sock" "${input[@]}" --quiet \
      --save-proofs "$work/proofs-$1" --timeline "$out/timeline-$1.svg" "${@:2}" \
      | tee "$out/bench-$1.log"
  }
  bench single single || true
  for n in ${LEVELS:-2 4 8}; do
    bench "$n" batch --count "${COUNT:-8}" --concurrency "$n" || true
  done
  if [ "${WINNING:-0}" -gt 0 ]; then
    timeout "${LIMIT:-900}" "$bin/cuzk" bench --addr "unix://$sock" "${input[@]}" --quiet \
      batch --count 4 --concurrency 4 > "$out/bench-under-winning.log" 2>&1 &
    load=$!
    sleep "${WINNING_AFTER:-30}"
    "$bin/cuzk" bench --addr "unix://$sock" --post "$sector/winning.bin" --priority critical \
      --quiet batch --count "$WINNING" --concurrency 1 | tee "$out/bench-winning.log" || true
    wait "$load" || true
    cat "$out/bench-under-winning.log"
  fi
  # The daemon's peak resident memory (VmHWM) over the whole run.
  grep -E "VmHWM|VmRSS" "/proc/$daemon/status" | tee "$out/daemon-memory.log"
  # A graceful stop lets running partitions finish; past $STOP_WAIT s the daemon is killed.
  kill -TERM "$daemon" || true
  for _ in $(seq "${STOP_WAIT:-60}"); do kill -0 "$daemon" 2>/dev/null || break; sleep 1; done
  kill -KILL "$daemon" 2>/dev/null || true
  wait "$daemon" || true
  tail -25 "$out/daemon.log"
  ;;
verify)
  [ -x "$bin/cuzk-peer" ] || tar -xJf "$bin/bin.tar.xz" -C "$bin"
  for d in "$work"/proofs-*; do
    "$bin/cuzk-peer" verify --fixture "$sector" --params "$params" --proofs "$d" \
      | tee -a "$out/verify.log"
  done
  ;;
*)
  echo "usage: tools/scale32g.sh stage | setup | run | verify" >&2
  exit 2
  ;;
esac
