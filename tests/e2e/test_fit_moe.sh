# test_fit_moe.sh -- `pocketllm fit` walking the ladder for a mixture of
# experts (qwen3moe, moe-small's widths: 8 experts of 256, 2 used, 2
# layers, untied so that the logits spread and KL means something):
#  1. --all --eval: every rung measured and scored; the quality columns are
#     there, the reference (the source: it fits this machine) is named in
#     the table and the JSON, and the KL grows from Q4_K_M to TQ1_0;
#  2. a budget between Q4_K_M's and Q3_K_M's needs picks Q3_K_M after
#     walking two rungs; the kept file loads and runs; the work folder goes;
#  3. a budget below the last rung's need: one line, exit 1;
#  4. a machine too small for the source (--machine-memory): the reference
#     is Q4_K_M, the best rung that fits it; the source is not scored; the
#     importance matrix for the IQ rungs comes from Q4_K_M's pass;
#  5. a quantized source (synth's Q4_K_M written directly): the rungs are
#     requantized, and it says so; its own recipe is "= source"; a budget it
#     fits takes it as it is (copied to --out); one between Q3 and Q2 picks
#     Q2_K, which runs;
#  6. misuse of --plan / --layers / --machine-memory: usage errors.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_SRC/tests/oracle/data/eval_story.txt
M=$PL_TMP/moe.gguf
expect_rc 0 "$BIN" synth --quiet --shape moe-small --n-layer 2 --n-expert 8 --n-expert-used 2 --untied --type f16 --seed 7 "$M"
EV=(--eval "$T" --eval-ctx 64 --eval-chunks 2)

# 1.
expect_rc 0 "$BIN" fit --quiet --model "$M" --memory 64M --ctx 256 "${EV[@]}" --all -t 2 --json
cp "$PL_TMP/out" "$PL_TMP/all.json"
/usr/bin/python3 - "$PL_TMP/all.json" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
assert t["reference"] == "source" and rows[0]["reference"] and rows[0]["kl_mean"] == 0, t
for r in rows:
    print(f'{r["recipe"]:8} {r["total_bytes"]:9} KL {r.get("kl_mean", -1):.5f} top-1 {r.get("top1", -1):.3f} {r["types"]}')
    assert r["measured"] and not r["computed"] and "kl_mean" in r and "top1" in r and "ppl" in r, r
    assert r["total_bytes"] == r["weights_bytes"] + r["heap_bytes"], r
assert [r["recipe"] for r in rows[1:]] == ["Q4_K_M", "Q3_K_M", "Q2_K", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "TQ1_0"]
assert not any(r["reference"] for r in rows[1:])
kl = [r["kl_mean"] for r in rows[1:]]
assert 0 < kl[0] < kl[2] < kl[-1] and kl[-1] > 3 * kl[0], kl
assert rows[1]["top1"] > rows[-1]["top1"], rows
need = [r["total_bytes"] for r in rows[1:]]
assert all(a > b for a, b in zip(need[:7], need[1:7])), need
PY
script_verdict $? "$PL_TMP/py" "moe: the --all table lacks its columns, its reference, or its KL order"

# 2. between Q4 and Q3
b=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print((r[1]["total_bytes"]+r[2]["total_bytes"])//2)' "$PL_TMP/all.json")
expect_rc 0 "$BIN" fit --quiet --model "$M" --memory "$b" --ctx 256 -t 2 --out "$PL_TMP/q3.gguf" --json
/usr/bin/python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
walked = [r["recipe"] for r in t["rows"][1:]]
print(f"budget {t['memory']}: {t['chosen']} after {walked}")
assert t["chosen"] == "Q3_K_M" and walked == ["Q4_K_M", "Q3_K_M"], t
PY
script_verdict $? "$PL_TMP/py" "moe: a budget between Q4_K_M and Q3_K_M did not pick Q3_K_M"
expect_rc 0 "$BIN" run --model "$PL_TMP/q3.gguf" --prompt "Once upon" -n 8 --temp 0 --ctx 256
[ -s "$PL_TMP/out" ] || fail "the kept Q3_K_M file generated nothing"
ls -a "$PL_TMP" | grep -q pocketllm-fit && fail "fit left its work folder behind"

# 3. below the last rung
expect_rc 1 "$BIN" fit --quiet --model "$M" --memory 2M --ctx 256 -t 2
expect_grep "does not fit" "$PL_TMP/err"
[ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "the refusal is not one line: $(cat "$PL_TMP/err")"
ok
small=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print(min(x["total_bytes"] for x in r[1:]) - 4096)' "$PL_TMP/all.json")
expect_rc 1 "$BIN" fit --quiet --model "$M" --memory "$small" --ctx 256 -t 2 --all
expect_grep "does not fit: the smallest rung" "$PL_TMP/err"

# 4. the machine holds Q4_K_M, not the source
mm=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print((r[0]["total_bytes"]+r[1]["total_bytes"])//2)' "$PL_TMP/all.json")
expect_rc 0 "$BIN" fit --quiet --model "$M" --memory 64M --ctx 256 "${EV[@]}" --machine-memory "$mm" --all -t 2
cp "$PL_TMP/out" "$PL_TMP/ref.txt"
cat "$PL_TMP/ref.txt" >&2
expect_grep "KL mean" "$PL_TMP/ref.txt"
expect_grep "is against Q4_K_M, the best rung that fits this machine's" "$PL_TMP/ref.txt"
expect_grep "not scored: needs more than this machine's memory" "$PL_TMP/ref.txt"
grep -E '^Q4 +Q4_K_M .* reference ' "$PL_TMP/ref.txt" >/dev/null || fail "Q4_K_M's row is not marked the reference: $(cat "$PL_TMP/ref.txt")"
ok
grep -E '^IQ1 +IQ1_S .*measured +[0-9]\.[0-9]{6} ' "$PL_TMP/ref.txt" >/dev/null ||
    fail "IQ1_S (made with the matrix collected on Q4_K_M) is not scored: $(cat "$PL_TMP/ref.txt")"
ok

# 5. a quantized source
Q=$PL_TMP/moe-q4.gguf
expect_rc 0 "$BIN" synth --quiet --shape moe-small --n-layer 2 --n-expert 8 --n-expert-used 2 --untied --type Q4_K_M --seed 7 "$Q"
expect_rc 0 "$BIN" fit --quiet --model "$Q" --memory 64M --ctx 256 --out "$PL_TMP/as-is.gguf"
expect_grep "the source is already quantized: every rung is requantized" "$PL_TMP/out"
expect_grep "the source fits as it is" "$PL_TMP/out"
cmp -s "$Q" "$PL_TMP/as-is.gguf" || fail "the quantized source that fits was not copied as it is"
ok
# (the rungs' types do not depend on the source's: the f16 table's needs hold)
b=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; print((r[2]["total_bytes"]+r[3]["total_bytes"])//2)' "$PL_TMP/all.json")
expect_rc 0 "$BIN" fit --quiet --model "$Q" --memory "$b" --ctx 256 "${EV[@]}" -t 2 --out "$PL_TMP/q2.gguf" --json
/usr/bin/python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
for r in rows:
    print(f'{r["recipe"]:8} {r["total_bytes"]:9} KL {r.get("kl_mean", -1):.5f} same as {r["same_as"]} {r["note"]}')
assert t["source_quantized"] and t["reference"] == "source" and t["chosen"] == "Q2_K", t
assert [r["recipe"] for r in rows[1:]] == ["Q4_K_M", "Q3_K_M", "Q2_K"], rows
assert rows[1]["same_as"] == "source" and rows[1]["kl_mean"] < 1e-9 and rows[1]["top1"] == 1, rows[1]
assert all(r["measured"] and "kl_mean" in r for r in rows), rows
assert rows[3]["kl_mean"] > rows[2]["kl_mean"] > 0, rows
PY
script_verdict $? "$PL_TMP/py" "moe: a quantized source was not requantized, scored and fitted as it should be"
expect_rc 0 "$BIN" run --model "$PL_TMP/q2.gguf" --prompt "Once upon" -n 8 --temp 0 --ctx 256
[ -s "$PL_TMP/out" ] || fail "the Q2_K requantized from Q4_K_M generated nothing"

# 6. misuse
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --plan --out "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --layers 48
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --plan --layers 0
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --plan --layers 513
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --machine-memory 12
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --plan --device vulkan
for f in "$PL_TMP"/err; do [ "$(wc -l <"$f")" -le 2 ] || fail "a usage error is long: $(cat "$f")"; done
done_testing
