# test_fit_plan.sh -- `pocketllm fit --plan`: the rungs computed, not made.
#  1. the computation is proven on small files: for a qwen3moe (moe-small's
#     256-wide rows, 4 experts of which 2 used, 4 layers: the recipes' rules
#     by layer have room to differ) and a dense tiny model (64-wide rows: llama.cpp's
#     fallback types), every rung's computed file is, to the byte, the file
#     `fit` makes and measures (with the same importance matrix), with the
#     same tensor types; the session is the same to the byte and the heap
#     within 64 KiB (the plan's heap is the source's, measured);
#  2. --layers: the 2-layer cut of the same shape, computed at 4 layers,
#     gives the 4-layer file's bytes (source and every rung) and session;
#  3. with --eval the cut's rungs are scored against the reference the
#     computed needs choose (here Q4_K_M: --machine-memory holds it and not
#     the source), and the output says what was computed and on what;
#  4. the full Qwen3-30B-A3B shape (48 layers, 128 experts) at 4096
#     positions, from a file at its real widths cut to one layer: the answer
#     for 16, 12 and 8 GiB, printed.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_SRC/tests/oracle/data/eval_story.txt
M4=$PL_TMP/moe4.gguf M2=$PL_TMP/moe2.gguf IM=$PL_TMP/moe.imatrix
SHAPE=(--shape moe-small --n-expert 4 --n-expert-used 2 --untied --type f16 --seed 9)
expect_rc 0 "$BIN" synth --quiet "${SHAPE[@]}" --n-layer 4 "$M4"
expect_rc 0 "$BIN" synth --quiet "${SHAPE[@]}" --n-layer 2 "$M2"
expect_rc 0 "$BIN" imatrix --quiet --model "$M4" --file "$T" --ctx 64 --chunks 2 --out "$IM"

same() { # WHAT MEASURED.json COMPUTED.json: every row's file and session equal, heap within 64 KiB
    /usr/bin/python3 - "$2" "$3" "$1" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
a, b = (json.load(open(f))["rows"] for f in sys.argv[1:3])
assert [r["recipe"] for r in a] == [r["recipe"] for r in b], (a, b)
for x, y in zip(a, b):
    print(f'{sys.argv[3]} {x["recipe"]:8} made {x["file_bytes"]:9} computed {y["file_bytes"]:9}  heap {x["heap_bytes"]} '
          f'/ {y["heap_bytes"]}  {y["types"]}')
    assert x["measured"] and not x["computed"] and y["measured"], (x, y)
    assert y["computed"] or y["recipe"] == "source", y
    assert x["file_bytes"] == y["file_bytes"] and x["types"] == y["types"], (x, y)
    assert x["session_bytes"] == y["session_bytes"] and abs(x["heap_bytes"] - y["heap_bytes"]) <= 65536, (x, y)
PY
    script_verdict $? "$PL_TMP/py" "$1: the computed rungs are not the rungs made"
}

# 1.
expect_rc 0 "$BIN" fit --quiet --model "$M4" --memory 1G --ctx 256 --imatrix "$IM" --all -t 2 --json
cp "$PL_TMP/out" "$PL_TMP/made.json"
expect_rc 0 "$BIN" fit --quiet --model "$M4" --memory 1G --ctx 256 --imatrix "$IM" --plan -t 2 --json
same moe "$PL_TMP/made.json" "$PL_TMP/out"
TINY=$PL_TMP/tiny.gguf TIM=$PL_TMP/tiny.imatrix
expect_rc 0 "$BIN" synth --quiet --shape tiny --n-layer 2 --seed 4 "$TINY"
expect_rc 0 "$BIN" imatrix --quiet --model "$TINY" --file "$T" --ctx 32 --chunks 2 --out "$TIM"
expect_rc 0 "$BIN" fit --quiet --model "$TINY" --memory 1G --ctx 64 --imatrix "$TIM" --all --json
cp "$PL_TMP/out" "$PL_TMP/tmade.json"
expect_rc 0 "$BIN" fit --quiet --model "$TINY" --memory 1G --ctx 64 --imatrix "$TIM" --plan --json
same tiny "$PL_TMP/tmade.json" "$PL_TMP/out"
# without a matrix the IQ rungs are planned as made with one, and say so
expect_rc 0 "$BIN" fit --quiet --model "$M4" --memory 1G --ctx 256 --plan
expect_grep "planned as made with an importance matrix" "$PL_TMP/out"
expect_grep "computed" "$PL_TMP/out"
ls -a "$PL_TMP" | grep -q pocketllm-fit && fail "fit --plan left its work folder behind"

# 2.
expect_rc 0 "$BIN" fit --quiet --model "$M2" --memory 1G --ctx 256 --imatrix "$IM" --plan --layers 4 -t 2 --json
same "moe 2 -> 4 layers" "$PL_TMP/made.json" "$PL_TMP/out"

# 3. the machine holds the computed Q4_K_M at 4 layers, not the source
mm=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print((r[0]["total_bytes"]+r[1]["total_bytes"])//2)' "$PL_TMP/made.json")
expect_rc 0 "$BIN" fit --quiet --model "$M2" --memory 1G --ctx 256 --plan --layers 4 --machine-memory "$mm" \
    --eval "$T" --eval-ctx 64 --eval-chunks 2 -t 2
cp "$PL_TMP/out" "$PL_TMP/q.txt"
cat "$PL_TMP/q.txt" >&2
expect_grep "is against Q4_K_M, the best rung that fits this machine's" "$PL_TMP/q.txt"
expect_grep "the needs are for 4 layers" "$PL_TMP/q.txt"
expect_grep "the quality is measured on the file itself, at its own layers" "$PL_TMP/q.txt"
grep -E '^Q4 +Q4_K_M .* computed +reference ' "$PL_TMP/q.txt" >/dev/null || fail "Q4_K_M is not the computed reference"
ok
grep -E '^ternary +TQ1_0 .* computed +[0-9]\.[0-9]{6} ' "$PL_TMP/q.txt" >/dev/null || fail "TQ1_0 is not scored"
ok

# 4. Qwen3-30B-A3B: 48 layers computed from one
F1=$PL_TMP/a3b-1.gguf
expect_rc 0 "$BIN" synth --quiet --shape qwen3moe-30b-a3b --n-layer 1 --type Q4_K_M --seed 1 "$F1"
for pair in "16G Q3_K_M" "12G Q2_K" "8G IQ1_M"; do
    set -- $pair
    expect_rc 0 "$BIN" fit --quiet --model "$F1" --memory "$1" --ctx 4096 --plan --layers 48 -t 2
    echo "== Qwen3-30B-A3B (48 layers, computed from 1) into $1 at 4096 positions:" >&2
    cat "$PL_TMP/out" >&2
    expect_grep "fit: $2 (" "$PL_TMP/out"
    expect_grep "(computed)" "$PL_TMP/out"
    expect_grep "the needs are for 48 layers" "$PL_TMP/out"
done
expect_rc 0 "$BIN" fit --quiet --model "$F1" --memory 16G --ctx 4096 --plan --layers 48 --json
/usr/bin/python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
r = {x["recipe"]: x for x in t["rows"]}
kv = 48 * 2 * 4096 * 512 * 2  # layers x K,V x positions x 4 KV heads of 128 x f16
q4 = r["Q4_K_M"]
print(f'Q4_K_M of 30B-A3B: file {q4["file_bytes"]} bytes, session {q4["session_bytes"]} (KV cache {kv})')
assert t["plan_layers"] == 48 and t["layers"] == 1 and all(x["computed"] for x in t["rows"]), t
# llama.cpp's Q4_K_M of Qwen3-30B-A3B is 18.6 GB: 128 x 3 expert matrices of 768 x 2048 in 48 layers
assert 18.3e9 < q4["file_bytes"] < 18.9e9 and q4["session_bytes"] > kv, q4
assert r["Q3_K_M"]["file_bytes"] < q4["file_bytes"] and r["IQ1_S"]["file_bytes"] < 7e9, r
PY
script_verdict $? "$PL_TMP/py" "30B-A3B: the computed Q4_K_M is not the size it should be"
rm -f "$F1"
done_testing
