#!/usr/bin/env bash
# Side-by-side end-to-end benchmark on one machine, in one run:
#   1. parameter generation for the 2 KiB PoRep circuit: `cuzk paramgen` vs bellperson's
#      `generate_random_parameters` (through `cuzk-peer paramgen`);
#   2. C2 of the bundled 2 KiB fixture: `cuzk prove porep` (CPU backend) vs upstream
#      `seal_commit_phase2`, RUNS times each, alternating, both with warm page cache.
# Prints every raw line and the medians. Takes about 20 minutes on a 2-core machine
# (upstream paramgen alone is 12-13 minutes). SKIP_UPSTREAM_PARAMGEN=1 skips step 1's peer.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
OUT=${OUT:-.cache/bench}
mkdir -p "$OUT"
cargo build --release --bin cuzk -p cuzk-daemon --bin cuzk-peer -p cuzk-upstream-tools
export FIL_PROOFS_PARENT_CACHE=$PWD/.cache/parents
ours=$OUT/params-cuzk; theirs=$OUT/params-upstream
log=$OUT/log.txt; : > "$log"
echo "machine: $(nproc) cores, $(grep MemTotal /proc/meminfo | awk '{print int($2/1048576)" GiB"}'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$log"

rm -rf "$ours"; ./target/release/cuzk paramgen porep --sector-size 2KiB --out "$ours" | tee -a "$log"
if [ -z "${SKIP_UPSTREAM_PARAMGEN:-}" ]; then
  rm -rf "$theirs"; ./target/release/cuzk-peer paramgen --sector-size 2KiB --out "$theirs" | tee -a "$log"
fi

# Both provers use cuzk's parameter file (upstream reads it: that is itself a check).
for i in $(seq "$RUNS"); do
  ./target/release/cuzk prove porep --c1 fixtures/porep/2KiB/c1.json --params "$ours" --out "$OUT/proof-cuzk" | grep '^prove' | tee -a "$log"
  ./target/release/cuzk-peer c2 --fixture fixtures/porep/2KiB --params "$ours" | tee -a "$log"
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
c=$(grep '^prove porep' "$log" | sed 's/.*total_ms=\([0-9]*\).*/\1/' | median)
u=$(grep '^upstream c2' "$log" | sed 's/.*total_ms=\([0-9]*\).*/\1/' | median)
echo "C2 2KiB median total_ms: cuzk=$c upstream=$u ratio=$(awk "BEGIN{printf \"%.2f\", $u/$c}")" | tee -a "$log"
pc=$(grep '^paramgen' "$log" | sed 's/.*generate_ms=\([0-9]*\).*/\1/')
pu=$(grep '^upstream paramgen' "$log" | sed 's/.*generate_ms=\([0-9]*\).*/\1/' || true)
[ -n "$pu" ] && echo "paramgen 2KiB generate_ms: cuzk=$pc upstream=$pu ratio=$(awk "BEGIN{printf \"%.2f\", $pu/$pc}")" | tee -a "$log"
exit 0
