#!/usr/bin/env bash
# bench_quant_dot.sh -- speed of our vec_dot kernels against llama.cpp's,
# side by side in one run on the same bytes: for each type, 64 rows of
# N=4096 weights (random blocks) against activations in its vec_dot type,
# best of REPS passes each, ns per row, and the ratio ours/llama.cpp
# (below 1 = we are faster).  Information only; never a pass/fail test.
# Usage: bench/bench_quant_dot.sh BUILD_DIR [REPS] [TYPE...]
set -euo pipefail
B=${1:?usage: bench_quant_dot.sh BUILD_DIR [REPS] [TYPE...]}
REPS=${2:-200}
shift $(( $# >= 2 ? 2 : 1 ))
T=$B/pl_quant_tool
O=$B/pl_oracle
[ -x "$T" ] && [ -x "$O" ] || { echo "need $T and $O (configure with -DPL_ORACLE_DIR)" >&2; exit 1; }
D=$(mktemp -d /tmp/pl_bench.XXXXXX)
trap 'rm -rf "$D"' EXIT
N=4096; ROWS=64
echo "llama.cpp CPU backend: $("$O" cpu-variant 2>/dev/null | xargs basename)" >&2
printf "%-8s %10s %10s %10s %8s\n" type ours_tier ours_ns llama_ns ratio
while read -r type act wblk ablk _; do
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$type"; then continue; fi
    "$T" gen-blocks "$type" $((N / wblk * ROWS)) 1 random "$D/w"
    "$T" gen-blocks "$act" $((N / ablk * ROWS)) 2 random "$D/a"
    ours=$("$T" vec-dot-time "$type" "$D/w" "$D/a" $N "$REPS" | awk '{print $2}')
    theirs=$("$O" vec-dot-time "$type" "$D/w" "$D/a" $N "$REPS" 2>/dev/null | awk '{print $2}')
    tier=$("$T" tiers | tail -1)
    printf "%-8s %10s %10s %10s %8.2f\n" "$type" "$tier" "$ours" "$theirs" "$(echo "$ours / $theirs" | bc -l)"
done < <("$T" types dot)
