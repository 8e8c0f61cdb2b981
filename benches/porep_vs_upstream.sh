#!/usr/bin/env bash
# Side-by-side end-to-end benchmark on one machine, in one run:
#   1. parameter generation for the 2 KiB PoRep circuit: `cuzk paramgen` vs bellperson's
#      `generate_random_parameters` (through `cuzk-peer paramgen`); skipped with
#      SKIP_UPSTREAM_PARAMGEN=1 (bellperson alone takes 7-13 minutes on 2 cores);
#   2. C2 of the bundled fixtures of each size in SIZES (default "2KiB 8MiB"): `cuzk prove
#      porep` (CPU backend) vs upstream `seal_commit_phase2`, RUNS times each, alternating,
#      both with warm page cache and reading the same parameter file (cuzk's).
# Prints every raw line and the medians into $OUT/log.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SIZES=${SIZES:-2KiB 8MiB}
OUT=${OUT:-.cache/bench}
mkdir -p "$OUT"
cargo build --release --bin cuzk -p cuzk-daemon --bin cuzk-peer -p cuzk-upstream-tools
export FIL_PROOFS_PARENT_CACHE=$PWD/.cache/parents
ours=$OUT/params-cuzk; theirs=$OUT/params-upstream
log=$OUT/log.txt; : > "$log"
echo "machine: $(nproc) cores, $(grep MemTotal /proc/meminfo | awk '{print int($2/1048576)" GiB"}'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$log"
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)" | tee -a "$log"

rm -rf "$ours"
for size in $SIZES; do
  ./target/release/cuzk paramgen porep --sector-size "$size" --out "$ours" | tee -a "$log"
done
if [ -z "${SKIP_UPSTREAM_PARAMGEN:-}" ]; then
  rm -rf "$theirs"; ./target/release/cuzk-peer paramgen --sector-size 2KiB --out "$theirs" | tee -a "$log"
fi

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for size in $SIZES; do
  case $size in 2KiB) bytes=2048;; 8MiB) bytes=8388608;; 512MiB) bytes=536870912;; esac
  for i in $(seq "$RUNS"); do
    ./target/release/cuzk prove porep --c1 "fixtures/porep/$size/c1.json" --params "$ours" --out "$OUT/proof-cuzk" | grep '^prove' | tee -a "$log"
    ./target/release/cuzk-peer c2 --fixture "fixtures/porep/$size" --params "$ours" | tee -a "$log"
  done
  c=$(grep "^prove porep.*sector_size=$bytes " "$log" | sed 's/.*total_ms=\([0-9]*\).*/\1/' | median)
  u=$(grep "^upstream c2.*sector_size=$bytes " "$log" | sed 's/.*total_ms=\([0-9]*\).*/\1/' | median)
  echo "C2 $size median total_ms: cuzk=$c upstream=$u ratio=$(awk "BEGIN{printf \"%.2f\", $u/$c}")" | tee -a "$log"
done
pc=$(grep '^paramgen.*sector_size=2048 ' "$log" | sed 's/.*generate_ms=\([0-9]*\).*/\1/')
pu=$(grep '^upstream paramgen' "$log" | sed 's/.*generate_ms=\([0-9]*\).*/\1/' || true)
[ -n "$pu" ] && echo "paramgen 2KiB generate_ms: cuzk=$pc upstream=$pu ratio=$(awk "BEGIN{printf \"%.2f\", $pu/$pc}")" | tee -a "$log"
exit 0
