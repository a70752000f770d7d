#!/usr/bin/env bash
# tokenizer.sh -- how fast PocketLLM tokenizes beside llama.cpp: the same
# 1 MiB of text (every *.md file of the llama.cpp source tree, in sorted
# order, repeated to 1 MiB) tokenized with the Qwen2 vocabulary
# (ggml-vocab-qwen2.gguf, add_special and parse_special on) by both
# engines in one run, interleaved round by round, each timing the best of
# three calls inside a process (load time excluded).  Prints each round
# and the ratio of the medians.  Not a pass/fail test: the ids are checked
# to be identical, the times are only reported.
#
# usage: bench/tokenizer.sh [BUILD_DIR] [ORACLE_DIR] [ROUNDS]
#   BUILD_DIR   a build configured with -DPL_ORACLE_DIR (default: build)
#   ORACLE_DIR  the llama.cpp v0.4.0 cache (default: the build's PL_ORACLE_DIR)
set -euo pipefail
BUILD=${1:-build}
ORACLE_DIR=${2:-$(sed -n 's/^PL_ORACLE_DIR:PATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)}
ROUNDS=${3:-5}
TOOL=$BUILD/pl_tok_tool ORACLE=$BUILD/pl_oracle
VOCAB=$ORACLE_DIR/src/models/ggml-vocab-qwen2.gguf
for f in "$TOOL" "$ORACLE" "$VOCAB"; do
    [ -e "$f" ] || { echo "tokenizer.sh: $f is missing (build with -DPL_ORACLE_DIR=...)" >&2; exit 1; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# the text: 1 MiB exactly
find "$ORACLE_DIR/src" -name '*.md' -type f | LC_ALL=C sort | xargs cat >"$TMP/md"
: >"$TMP/text"
while [ "$(stat -c %s "$TMP/text")" -lt 1048576 ]; do cat "$TMP/md" >>"$TMP/text"; done
head -c 1048576 "$TMP/text" >"$TMP/text1m"

# the same ids from both (one record through the batch tools)
/usr/bin/python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[2],"wb").write(struct.pack("<I",len(d))+d)' \
    "$TMP/text1m" "$TMP/rec"
"$ORACLE" tokenize-batch "$VOCAB" "$TMP/rec" "$TMP/ids.llama" 2>/dev/null
"$TOOL" batch "$VOCAB" "$TMP/rec" "$TMP/ids.ours"
if cmp -s "$TMP/ids.llama" "$TMP/ids.ours"; then
    echo "ids identical: $(wc -w <"$TMP/ids.ours") tokens from 1048576 bytes"
else
    echo "tokenizer.sh: the two engines give different ids for the text" >&2
    exit 1
fi

ours=() llama=()
for r in $(seq "$ROUNDS"); do
    o=$("$TOOL" time "$VOCAB" "$TMP/text1m" --repeat 3 | sed -n 's/.*best_ms \([0-9.]*\).*/\1/p')
    l=$("$ORACLE" tokenize-time "$VOCAB" "$TMP/text1m" --repeat 3 2>/dev/null | sed -n 's/.*best_ms \([0-9.]*\).*/\1/p')
    ours+=("$o") llama+=("$l")
    printf 'round %d: PocketLLM %8.1f ms   llama.cpp %8.1f ms\n' "$r" "$o" "$l"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mo=$(median "${ours[@]}") ml=$(median "${llama[@]}")
awk -v o="$mo" -v l="$ml" 'BEGIN {
    printf "median: PocketLLM %.1f ms (%.1f MB/s), llama.cpp %.1f ms (%.1f MB/s)\n", o, 1.048576e3 / o, l, 1.048576e3 / l
    printf "ratio: PocketLLM is %.2fx the speed of llama.cpp (llama.cpp time / PocketLLM time)\n", l / o }'
