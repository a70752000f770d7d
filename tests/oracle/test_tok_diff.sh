# test_tok_diff.sh -- differential tokenization against llama.cpp: for each
# vocabulary, PL_TOK_N (default 10000) generated strings (tests/tools/
# pl_tok_gen.c: many scripts, emoji and ZWJ sequences, combining marks,
# white space and new-line runs, digit runs, contractions, code, the
# vocabulary's special tokens inside text, malformed UTF-8, NUL bytes, long
# runs) are tokenized by both engines with add_special and parse_special
# each on and off; every id must agree.  The bundle's other loadable
# vocabularies get PL_TOK_N_EXTRA (default 2000) strings.  The seed is
# printed; PL_TOK_SEED=<seed> replays a run.
. "$(dirname "$0")/tok_lib.sh"
SEED=${PL_TOK_SEED:-20261130}
N=${PL_TOK_N:-10000}
N_EXTRA=${PL_TOK_N_EXTRA:-2000}
echo "test_tok_diff: seed $SEED (PL_TOK_SEED=$SEED replays), $N strings per vocabulary, 4 modes each"

# show_mismatch NAME IN LLAMA OURS: the first differing strings, escaped
show_mismatch() {
    /usr/bin/python3 - "$@" <<'PY' >&2
import struct, sys
name, inp, a, b = sys.argv[1:5]
data = open(inp, 'rb').read()
recs, o = [], 0
while o + 4 <= len(data):
    n = struct.unpack('<I', data[o:o + 4])[0]
    recs.append(data[o + 4:o + 4 + n]); o += 4 + n
la, lb = open(a).read().split('\n'), open(b).read().split('\n')
modes = ['add+parse', 'add', 'parse', 'none']
shown = 0
for i, (x, y) in enumerate(zip(la, lb)):
    if x != y and shown < 3:
        print('%s: string %d (%s) %r\n  llama.cpp: %s\n  ours:      %s' % (name, i // 4, modes[i % 4], recs[i // 4], x[:300], y[:300]))
        shown += 1
print('%s: %d of %d results differ' % (name, sum(x != y for x, y in zip(la, lb)), len(la)))
PY
}

run() { # run NAME COUNT
    local v=$1 n=$2 f
    f=$(vocab_file "$v")
    expect_rc 0 "$GEN" text "$f" "$n" "$SEED" "$PL_TMP/$v.in" || return
    # the two engines side by side (two cores)
    "$ORACLE" tokenize-batch "$f" "$PL_TMP/$v.in" "$PL_TMP/$v.llama" --all-modes 2>"$PL_TMP/$v.err" &
    local pid=$!
    expect_rc 0 "$TOOL" batch "$f" "$PL_TMP/$v.in" "$PL_TMP/$v.ours" --all-modes
    ok
    wait $pid || { fail "$v: pl_oracle tokenize-batch failed: $(head -c 300 "$PL_TMP/$v.err")"; return; }
    ok
    if [ "$(wc -l <"$PL_TMP/$v.llama")" != $((4 * n)) ]; then
        fail "$v: llama.cpp gave $(wc -l <"$PL_TMP/$v.llama") results for $((4 * n))"
    elif cmp -s "$PL_TMP/$v.llama" "$PL_TMP/$v.ours"; then
        echo "$v: $((4 * n)) tokenizations identical"
    else
        fail "$v: tokenizations differ (seed $SEED)"
        show_mismatch "$v" "$PL_TMP/$v.in" "$PL_TMP/$v.llama" "$PL_TMP/$v.ours"
    fi
}
for v in $TOK_VOCABS; do run "$v" "$N"; done
for v in $TOK_EXTRA; do run "$v" "$N_EXTRA"; done
done_testing
