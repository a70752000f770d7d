# test_perplexity.sh -- `pocketllm perplexity` against llama.cpp on the real
# checkpoint (stories260K) and a text of 1359 tokens:
#  1. the perplexity equals llama-perplexity's (restated on llama_decode by
#     pl_oracle perplexity: same windows, same BOS rule, same scored half)
#     within 0.1%, at two window sizes, for the f32 model and for llama.cpp's
#     own Q4_0 quantization of it;
#  2. KL divergence: the model against its own saved log-probabilities gives
#     exactly 0 and 100% top-1 agreement in the exact f32 layout (and within
#     the 16-bit step in llama.cpp's u16 layout, whose size is checked);
#     the Q4_0 model against the f32 base gives KL > 0 -- and the same mean
#     KL, top-1 agreement and both perplexities as computed in Python from
#     llama.cpp's own teacher-forced logits of both models, window by window.
. "$(dirname "$0")/ppl_lib.sh"
S=$PL_SHARED/models/stories260K.gguf
T=$PL_SRC/tests/oracle/data/eval_story.txt
Q=$PL_TMP/q4_0.gguf
[ -f "$S" ] || { fail "missing $S"; done_testing; exit 1; }
expect_rc 0 "$ORACLE" quantize "$S" "$Q" Q4_0 -t 1

# 1. perplexity within 0.1% of llama.cpp's
for model in "$S" "$Q"; do
    for ctx in 128 256; do ppl_check "$(basename "$model")" "$model" "$T" "$ctx" -t 1; done
done

# 2. KL divergence, exact layout: a model against itself
B32=$PL_TMP/base.f32 B16=$PL_TMP/base.u16
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --save-logits "$B32"
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --kl-base "$B32" --json &&
    /usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "KL of the model against its own f32 file is not 0 / 100%"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["kl_mean"] == 0 and r["kl_max"] == 0 and r["top1"] == 1, r
assert abs(r["ppl_base"] / r["ppl"] - 1) < 1e-6, r
PY
ok
# llama.cpp's u16 layout: 20-byte header, the tokens, rows of 2*((V+1)/2)+4 u16
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --save-logits "$B16" --logits-type u16
size=$(stat -c %s "$B16")
want=$((20 + 10 * 128 * 4 + 10 * 63 * (512 + 4) * 2))
ok
[ "$size" = "$want" ] || fail "u16 file has $size bytes, llama.cpp's layout has $want"
[ "$(head -c 8 "$B16")" = "_logits_" ] || fail "u16 file lacks llama.cpp's _logits_ magic"
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --kl-base "$B16" --json &&
    /usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "KL of the model against its own u16 file is not within the 16-bit step"
import json, sys
r = json.load(open(sys.argv[1]))
assert abs(r["kl_mean"]) < 1.3e-4 and r["kl_max"] < 1.3e-4 and r["top1"] >= 0.99, r
PY
ok

# ... and Q4_0 against the f32 base: KL > 0, and the numbers llama.cpp's
# logits give (two windows of 128: positions 64..126 of each are scored)
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --chunks 2 --save-logits "$B32"
expect_rc 0 "$BIN" perplexity --quiet --model "$Q" --file "$T" --ctx 128 --chunks 2 --kl-base "$B32" --json
cp "$PL_TMP/out" "$PL_TMP/ours.json"
expect_rc 0 "$ORACLE" tokenize "$S" --no-parse-special --file "$T"
ids=$(cat "$PL_TMP/out")
for w in 0 1; do
    win=$(echo "$ids" | awk -v w=$w '{ s = ""; for (i = 1; i <= 128; i++) { t = $(w * 128 + i); if (i == 1) t = 1; s = s " " t } print s }')
    expect_rc 0 "$ORACLE" logits "$S" --ids "$win" --out "$PL_TMP/base$w.f32" --fa off --kv f16 -t 1
    expect_rc 0 "$ORACLE" logits "$Q" --ids "$win" --out "$PL_TMP/q$w.f32" --fa off --kv f16 -t 1
done
/usr/bin/python3 - "$PL_TMP" "$ids" <<'PY' || fail "Q4_0 against the base: our KL/top-1/perplexity differ from llama.cpp's logits'"
import json, math, struct, sys
d, ids = sys.argv[1], [int(t) for t in sys.argv[2].split()]
V, N, first = 512, 128, 64
def rows(path):
    b = open(path, "rb").read()
    f = struct.unpack(f"{len(b) // 4}f", b)
    return [f[i * V:(i + 1) * V] for i in range(N)]
def logsoftmax(l):
    m = max(l)
    s = math.log(sum(math.exp(x - m) for x in l))
    return [x - m - s for x in l]
kl = nll = nllb = same = n = 0
for w in range(2):
    B, Qr = rows(f"{d}/base{w}.f32"), rows(f"{d}/q{w}.f32")
    for p in range(first, N - 1):
        lb, lq = logsoftmax(B[p]), logsoftmax(Qr[p])
        tok = ids[w * N + p + 1]
        kl += sum(math.exp(a) * (a - b) for a, b in zip(lb, lq))
        nll -= lq[tok]; nllb -= lb[tok]
        same += max(range(V), key=lambda i: lb[i]) == max(range(V), key=lambda i: lq[i])
        n += 1
ours = json.load(open(f"{d}/ours.json"))
ref = {"kl_mean": kl / n, "top1": same / n, "ppl": math.exp(nll / n), "ppl_base": math.exp(nllb / n)}
print("Q4_0 vs f32, 2 windows: ours " + ", ".join(f"{k} {ours[k]:.6f}" for k in ref) +
      "; from llama.cpp's logits " + ", ".join(f"{k} {v:.6f}" for k, v in ref.items()), file=sys.stderr)
assert ours["scored"] == n and ours["kl_mean"] > 0.01, ours
# The two engines' f32 logits differ by float rounding (4e-5 in perplexity
# seen); Q4_0's by q8_0 activation rounding, which flips the odd value on a
# rounding boundary and carries on (max logit difference 0.4 = 0.95% of the
# range on these windows; one argmax of 128 differs).  Over 126 positions
# that moves the Q4_0 perplexity by 0.17% and the mean KL by 0.5%: allowed
# 0.5% and 2%, top-1 within two positions; the base within 0.1%.
assert abs(ours["kl_mean"] / ref["kl_mean"] - 1) < 0.02, (ours, ref)
assert abs(ours["ppl_base"] / ref["ppl_base"] - 1) < 1e-3, (ours, ref)
assert abs(ours["ppl"] / ref["ppl"] - 1) < 5e-3, (ours, ref)
assert abs(ours["top1"] - ref["top1"]) * n <= 2, (ours, ref)
PY
ok
done_testing
