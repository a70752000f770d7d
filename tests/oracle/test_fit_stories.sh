# test_fit_stories.sh -- `pocketllm fit` on the real checkpoint, stories260K.
# Its rows are 64 wide: no K or IQ block (256 wide) fits a row, so
# llama.cpp's recipes fall back (q4_K -> q5_0, q6_K -> q8_0, q2_K/q3_K/IQ ->
# iq4_nl, TQ -> q4_0, ...) and the ladder collapses: what fit must report
# (every rung's tensor types, "= RUNG" where a rung gives the same file)
# and what it must pick from.
#  1. the whole table (--all --eval): every rung measured and scored, no K,
#     IQ-below-4-bit or ternary type in any file, the rungs that fall back
#     to the same types marked and identical in every figure, KL > 0 below
#     the source, the memory figures consistent (needs = mapping + heap,
#     heap >= the session's own sum >= its KV cache);
#  2. for budgets between the distinct needs, and below all of them, fit
#     picks the first rung in ladder order that fits (the best a person
#     could run), by its own table and by the first table's figures; below
#     every rung it says it does not fit (exit 1), and when the tokenizer and
#     session alone exceed the budget it says so without quantizing;
#  3. the file it writes is `pocketllm quantize`'s for that recipe byte for
#     byte, and llama.cpp runs it.
# (KL does not grow monotonically here: Q2_K falls back to q4_0 and the IQ
# rungs to iq4_nl, which is better; test_fit_qwen3.sh checks the growth on
# a model whose rows are whole 256-blocks.)
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
S=$PL_SHARED/models/stories260K.gguf
T=$PL_SRC/tests/oracle/data/eval_story.txt
IM=$PL_TMP/s.imatrix
[ -f "$S" ] || { fail "missing $S"; done_testing; exit 1; }
expect_rc 0 "$BIN" imatrix --quiet --model "$S" --file "$T" --ctx 128 --out "$IM"

# 1. the table
expect_rc 0 "$BIN" fit --quiet --model "$S" --memory 100M --ctx 256 --eval "$T" --eval-ctx 128 --all --json
cp "$PL_TMP/out" "$PL_TMP/table.json"
/usr/bin/python3 - "$PL_TMP/table.json" "$S" <<'PY' || fail "stories260K: the fit table is wrong"
import json, os, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
ladder = ["Q4_K_M", "Q3_K_M", "Q2_K", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "TQ1_0"]
assert [r["recipe"] for r in rows] == ["source"] + ladder, [r["recipe"] for r in rows]
assert rows[0]["file_bytes"] == os.path.getsize(sys.argv[2]), rows[0]
kv = 5 * 2 * 256 * 32 * 2  # layers x (K, V) x positions x kv_dim x f16
allowed = {"f32", "f16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "iq4_nl"}
for r in rows:
    assert r["measured"] and "kl_mean" in r, r
    assert r["total_bytes"] == r["weights_bytes"] + r["heap_bytes"], r
    assert r["weights_bytes"] == r["file_bytes"] and r["heap_bytes"] >= r["session_bytes"] >= kv, r
    types = {kv_.split(":")[0] for kv_ in r["types"].split()}
    assert types <= allowed, (r["recipe"], types)
    print(f'{r["recipe"]:8} needs {r["total_bytes"]:8} KL {r["kl_mean"]:.6f} top-1 {r["top1"]:.3f} '
          f'{"= " + r["same_as"] if r["same_as"] else ""} {r["types"]}', file=sys.stderr)
by = {r["recipe"]: r for r in rows}
assert by["source"]["kl_mean"] == 0 and by["source"]["top1"] == 1
for r in rows[1:]:
    assert r["kl_mean"] > 0 and r["top1"] < 1, r
# the IQ rungs below IQ2_XS all fall back to iq4_nl: the same file
for name in ["IQ2_XXS", "IQ1_M", "IQ1_S"]:
    r, s = by[name], by["IQ2_XS"]
    assert r["same_as"] == "IQ2_XS", r
    assert (r["file_bytes"], r["kl_mean"], r["ppl"], r["types"]) == (s["file_bytes"], s["kl_mean"], s["ppl"], s["types"]), r
assert by["Q4_K_M"]["same_as"] is None and by["Q3_K_M"]["same_as"] is None
assert t["chosen"] == "Q4_K_M", t["chosen"]
PY
ok

# 2. budgets: above all, between each pair of needs that differ by more than
# 2 KiB, and below all.  (Rungs with files of the same size differ in heap
# by a few dozen bytes -- their metadata strings, the allocator's reuse of
# freed blocks -- which is measured, but not a gap to put a budget in.)
budgets=$(/usr/bin/python3 - "$PL_TMP/table.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"][1:]
needs = sorted({r["total_bytes"] for r in rows}, reverse=True)
out = [needs[0] + 100000] + [(a + b) // 2 for a, b in zip(needs, needs[1:]) if a - b > 2048] + [needs[-1] - 20000]
print(" ".join(str(b) for b in out))
PY
)
for b in $budgets; do
    want=$(/usr/bin/python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"][1:]
fit = [r["recipe"] for r in rows if r["total_bytes"] <= int(sys.argv[2])]
print(fit[0] if fit else "none")' "$PL_TMP/table.json" "$b")
    rc=0
    [ "$want" = none ] && rc=1
    expect_rc $rc "$BIN" fit --quiet --model "$S" --memory "$b" --ctx 256 --imatrix "$IM" --all --json || continue
    /usr/bin/python3 - "$PL_TMP/out" "$b" "$want" <<'PY' || fail "budget $b: fit did not pick $want"
import json, sys
t = json.load(open(sys.argv[1]))
b, want = int(sys.argv[2]), sys.argv[3]
fit = [r["recipe"] for r in t["rows"][1:] if r["measured"] and r["total_bytes"] <= b]
own = fit[0] if fit else None
print(f"budget {b}: picked {t['chosen']}, its own table says {own}, the first table {want}", file=sys.stderr)
assert t["chosen"] == own and (t["chosen"] or "none") == want, (t["chosen"], own, want)
PY
    ok
    [ "$want" = none ] && expect_grep "does not fit: the smallest rung" "$PL_TMP/err"
done
# the tokenizer and the session alone are over the budget: said at once
expect_rc 1 "$BIN" fit --quiet --model "$S" --memory 1.2M --ctx 256
expect_grep "tokenizer and a session of this context alone need" "$PL_TMP/err"
grep -q "not tried" "$PL_TMP/out" || fail "a hopeless budget still quantized: $(head -c 300 "$PL_TMP/out")"
ok

# 3. the file written is quantize's, and llama.cpp runs it
mid=$(echo "$budgets" | awk '{print $2}')
expect_rc 0 "$BIN" fit --quiet --model "$S" --memory "$mid" --ctx 256 --imatrix "$IM" --out "$PL_TMP/fit.gguf"
chosen=$(awk '/^fit: / {print $2; exit}' "$PL_TMP/out")
ok
[ "$chosen" = Q3_K_M ] || fail "budget $mid: chose '$chosen', expected Q3_K_M"
expect_rc 0 "$BIN" quantize --quiet "$S" "$PL_TMP/q3.gguf" Q3_K_M --imatrix "$IM"
ok
cmp -s "$PL_TMP/fit.gguf" "$PL_TMP/q3.gguf" || fail "fit's Q3_K_M file differs from pocketllm quantize's"
expect_rc 0 "$ORACLE" greedy "$PL_TMP/fit.gguf" --ids "1" -n 8 --fa off --kv f16 -t 1
ok
[ "$(wc -w <"$PL_TMP/out")" -ge 1 ] || fail "llama.cpp generated nothing from fit's file"
ls -a "$PL_TMP" | grep -q pocketllm-fit && fail "fit left its work folder behind"
done_testing
