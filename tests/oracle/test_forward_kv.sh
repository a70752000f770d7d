# test_forward_kv.sh -- every KV cache type against llama.cpp run with the
# same cache types (type_k / type_v): greedy ids identical up to
# llama.cpp's first undecidable step (forward_lib.sh) and teacher-forced
# logits within tolerance, on a random-weight qwen3 (heads of 32: every
# block type fits) with flash attention, as llama.cpp needs it for a
# quantized V; K and V of two types with flash and without; bf16 on the
# real checkpoint stories260K.  Also the refusals, ours and llama.cpp's
# alike: a block type on stories260K's heads of 8, and a quantized V with
# flash attention set off.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }
QWEN=$PL_TMP/qwen3-small-f32.gguf
expect_rc 0 "$BIN" synth --quiet --shape small --type f32 --untied --seed 7 "$QWEN"

# every type for K and V, flash attention
set_fa on
for kv in q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl bf16; do
    greedy_check "qwen3 small" "$QWEN" $kv 0.005 48 --prompt "Once upon a time"
    logits_check "qwen3 small" "$QWEN" $kv 0.005 "$(rel_for $kv)" "$GREEDY_IDS"
done
# K and V of two types: a quantized K over an f16 V, a quantized V over f16 K
for kv in q8_0/f16 f16/q4_0 q4_1/q8_0; do
    greedy_check "qwen3 small" "$QWEN" $kv 0.005 48 --prompt "Lily and Tom went to the park"
    logits_check "qwen3 small" "$QWEN" $kv 0.005 "$(rel_for $kv)" "$GREEDY_IDS"
done
# the default path: a quantized K (V in f16, f32 or bf16), and bf16
set_fa off
for kv in q8_0/f16 q5_1/f32 bf16 iq4_nl/bf16; do
    greedy_check "qwen3 small" "$QWEN" $kv 0.005 48 --prompt "Once upon a time"
    logits_check "qwen3 small" "$QWEN" $kv 0.005 "$(rel_for $kv)" "$GREEDY_IDS"
done

# stories260K (heads of 8): bf16 both ways; a block type refused by both
for fa in off on; do
    set_fa $fa
    greedy_check "stories260K" "$STORIES" bf16 0.02 64 --prompt "Once upon a time"
    logits_check "stories260K" "$STORIES" bf16 0.02 "$(rel_for bf16)" "$GREEDY_IDS"
done
expect_rc 1 "$BIN" run --model "$STORIES" --prompt "Once upon a time" -n 4 -ctk q8_0
ok
grep -q "do not divide this model's heads of 8" "$PL_TMP/err" || fail "no reason given for q8_0 on heads of 8: $(cat "$PL_TMP/err")"
"$ORACLE" greedy "$STORIES" --prompt "Once upon a time" -n 4 --fa on --ctk q8_0 >/dev/null 2>"$PL_TMP/llama_err"
rc=$?
ok
[ $rc != 0 ] && grep -q "does not divide" "$PL_TMP/llama_err" ||
    fail "llama.cpp took q8_0 on heads of 8 (exit $rc): the refusal above is not llama.cpp's"
# a quantized V with flash set off: refused with the reason; not given:
# flash is turned on, as llama.cpp's auto does
expect_rc 1 "$BIN" run --model "$QWEN" --prompt "Once upon a time" -n 4 -ctv q8_0 -fa off
ok
grep -q "needs flash attention" "$PL_TMP/err" || fail "no reason given for a quantized V without flash: $(cat "$PL_TMP/err")"
expect_rc 0 "$BIN" run --model "$QWEN" --prompt "Once upon a time" -n 8 -ctv q8_0 --print-ids
auto=$(sed -n 2p "$PL_TMP/out")
expect_rc 0 "$BIN" run --model "$QWEN" --prompt "Once upon a time" -n 8 -ctv q8_0 -fa on --print-ids
ok
[ "$(sed -n 2p "$PL_TMP/out")" = "$auto" ] || fail "-ctv q8_0 without -fa is not flash attention"
# a quantized cache changes the arithmetic: the logits differ from f16's
expect_rc 0 "$BIN" logits --model "$QWEN" --prompt "Once upon a time" --out "$PL_TMP/l_q4" --kv q4_0 -fa on
expect_rc 0 "$BIN" logits --model "$QWEN" --prompt "Once upon a time" --out "$PL_TMP/l_f16" --kv f16 -fa on
ok
cmp -s "$PL_TMP/l_q4" "$PL_TMP/l_f16" && fail "--kv q4_0 gives the logits of f16: the option is ignored"
rm -f "$QWEN"
done_testing
