# test_fit_qwen3.sh -- `pocketllm fit` on random-weight qwen3 checkpoints.
#
# The real qwen3-0.6b shape (tied, vocabulary 151936) cut to one layer (the
# suite's time: every rung quantizes the 155M-parameter embedding, 10 s of
# CPU each).  Its figures are real, its KL is not informative: synth's tied
# embedding (uniform +-1) gives logits of spread ~18, so every distribution
# is one-hot and every rung agrees with the source (KL ~ 0, top-1 100%).
#  1. a budget above Q4_K_M's need: Q4_K_M chosen after one rung, written,
#     loaded and run by llama.cpp; the heap counts the tokenizer's tables
#     (tens of MiB for this vocabulary) and the session (its KV cache);
#  2. a budget below what the tokenizer and the session alone take: "does
#     not fit" at once, nothing quantized.
#
# The KL table therefore runs on the 0.6B's layer shapes (n_embd 1024, 16
# heads / 8 KV heads of 128, FFN 3072, rows whole 256-blocks) at one layer,
# untied (output logits of spread ~1) with synth's 259-token vocabulary:
#  3. --all --eval: the mean KL divergence against the source grows down the
#     ladder: each rung's at least 0.9 x the rung above (the bottom rungs
#     differ by 10-20% from one to the next, and a mean over 126 positions
#     has a standard error of ~5% of itself, so a smaller dip would be
#     noise), and TQ1_0's more than 10 x Q4_K_M's; top-1 agreement falls
#     from first to last; the pick is the first rung that fits;
#  4. a budget between Q4's and Q3's needs picks Q3_K_M, walking only the
#     two rungs needed.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_SRC/tests/oracle/data/eval_story.txt

R=$PL_TMP/q06.gguf
expect_rc 0 "$BIN" synth --quiet --shape qwen3-0.6b --n-layer 1 --type f16 --seed 3 "$R"
# 1.
expect_rc 0 "$BIN" fit --quiet --model "$R" --memory 2G --ctx 4096 --out "$PL_TMP/fit06.gguf" --json
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "qwen3-0.6b: fit did not stop at Q4_K_M with real figures"
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
assert t["chosen"] == "Q4_K_M" and [r["recipe"] for r in rows] == ["source", "Q4_K_M"], t
kv = 1 * 2 * 4096 * 1024 * 2
for r in rows:
    assert r["heap_bytes"] - r["session_bytes"] > 20 << 20, r  # the 151936-token tokenizer (~29 MiB)
    assert r["session_bytes"] >= kv and r["total_bytes"] == r["weights_bytes"] + r["heap_bytes"], r
    print(f'{r["recipe"]}: mapping {r["weights_bytes"]}, heap {r["heap_bytes"]} (session {r["session_bytes"]}) '
          f'{r["types"]}', file=sys.stderr)
assert rows[1]["weights_bytes"] < rows[0]["weights_bytes"] / 2
PY
ok
expect_rc 0 "$ORACLE" greedy "$PL_TMP/fit06.gguf" --ids "1 2 3" -n 4 --fa off --kv f16 -t 1
ok
[ "$(wc -w <"$PL_TMP/out")" -ge 1 ] || fail "llama.cpp generated nothing from fit's qwen3-0.6b file"
rm -f "$PL_TMP/fit06.gguf"
# 2.
expect_rc 1 "$BIN" fit --quiet --model "$R" --memory 40M --ctx 4096
expect_grep "tokenizer and a session of this context alone need" "$PL_TMP/err"
rm -f "$R"

# 3. the KL table
D=$PL_TMP/d.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 1024 --n-layer 1 --n-head 16 --n-head-kv 8 --head-dim 128 \
    --n-ff 3072 --untied --type f16 --seed 3 "$D"
expect_rc 0 "$BIN" fit --quiet --model "$D" --memory 44M --ctx 512 --eval "$T" --eval-ctx 128 --eval-chunks 2 \
    --all --json
cp "$PL_TMP/out" "$PL_TMP/table.json"
/usr/bin/python3 - "$PL_TMP/table.json" <<'PY' || fail "qwen3 0.6b layers: KL does not grow down the ladder, or the pick is wrong"
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"][1:]
for r in t["rows"]:
    print(f'{r["recipe"]:8} needs {r["total_bytes"]:9} KL {r["kl_mean"]:.6f} (99% {r["kl_p99"]:.6f}) '
          f'top-1 {r["top1"]:.3f} ppl {r["ppl"]:.3f} {r["types"]}', file=sys.stderr)
assert all(r["measured"] and "kl_mean" in r for r in rows), rows
kl = [r["kl_mean"] for r in rows]
for a, b, r in zip(kl, kl[1:], rows[1:]):
    assert b >= 0.9 * a, (r["recipe"], a, b)
assert kl[0] > 0 and kl[-1] > 10 * kl[0], kl
assert rows[0]["top1"] > rows[-1]["top1"], rows
fit = [r["recipe"] for r in rows if r["total_bytes"] <= t["memory"]]
assert t["chosen"] == (fit[0] if fit else None), (t["chosen"], fit)
PY
ok
# 4. a budget between the needs of the top rungs: the walk stops at the pick
IM=$PL_TMP/d.imatrix
expect_rc 0 "$BIN" imatrix --quiet --model "$D" --file "$T" --ctx 128 --chunks 2 --out "$IM"
for pair in "Q3_K_M 1 2"; do
    set -- $pair
    b=$(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["rows"]
print((r[int(sys.argv[2])]["total_bytes"] + r[int(sys.argv[3])]["total_bytes"]) // 2)' "$PL_TMP/table.json" "$2" "$3")
    expect_rc 0 "$BIN" fit --quiet --model "$D" --memory "$b" --ctx 512 --imatrix "$IM" --json || continue
    /usr/bin/python3 - "$PL_TMP/out" "$1" <<'PY' || fail "budget between rungs: fit did not pick $1"
import json, sys
t = json.load(open(sys.argv[1]))
walked = [r["recipe"] for r in t["rows"][1:]]
print(f"budget {t['memory']}: picked {t['chosen']} after walking {walked}", file=sys.stderr)
assert t["chosen"] == sys.argv[2] and walked[-1] == sys.argv[2], t
PY
    ok
done
done_testing
