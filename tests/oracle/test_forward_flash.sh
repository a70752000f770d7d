# test_forward_flash.sh -- `--flash-attn on` (llama.cpp's flash-attention
# arithmetic: online softmax, V summed in the cache type) against llama.cpp
# run with flash attention on: the real checkpoint stories260K and a small
# random-weight qwen3 (grouped-query attention, 2 queries per KV head), f16
# and f32 caches.  Greedy ids identical up to llama.cpp's first near-tie;
# teacher-forced argmax agreement on every decidable position and the
# largest logit difference relative to the range.  Also: our flash path
# differs from our default path (the option is not ignored), and one token
# at a time gives the ids of a batched prefill.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"
FA=on
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }

# margins of the f16 cache in test_forward_stories.sh /
# test_forward_qwen3.sh for both caches: the flash path rounds the V sum to
# f16 after every position, and llama.cpp casts an f32 cache to f16 for it
for kv in f16 f32; do
    margin=0.02 rel=1e-3
    for prompt in "Once upon a time" "Lily and Tom went to the park"; do
        greedy_check "stories260K '$prompt'" "$STORIES" $kv $margin 64 --prompt "$prompt"
        logits_check "stories260K '$prompt'" "$STORIES" $kv $margin $rel "$GREEDY_IDS"
    done
done

QWEN=$PL_TMP/qwen3-small-f32.gguf
expect_rc 0 "$BIN" synth --quiet --shape small --type f32 --untied --seed 7 "$QWEN"
greedy_check "qwen3 small untied f32" "$QWEN" f16 0.005 48 --prompt "Once upon a time"
logits_check "qwen3 small untied f32" "$QWEN" f16 0.005 1e-3 "$GREEDY_IDS"
greedy_check "qwen3 small untied f32" "$QWEN" f32 0.005 48 --prompt "Once upon a time"
logits_check "qwen3 small untied f32" "$QWEN" f32 0.005 1e-3 "$GREEDY_IDS"

# the option changes the arithmetic: logits with and without it differ
expect_rc 0 "$BIN" logits --model "$STORIES" --prompt "Once upon a time there was" --out "$PL_TMP/fa_on" --kv f16 --flash-attn on
expect_rc 0 "$BIN" logits --model "$STORIES" --prompt "Once upon a time there was" --out "$PL_TMP/fa_off" --kv f16 --flash-attn off
ok
cmp -s "$PL_TMP/fa_on" "$PL_TMP/fa_off" && fail "--flash-attn on gives the logits of the default path: the option is ignored"

# one token at a time, 1 and 2 threads: the ids of the batched prefill
base=$("$BIN" run --model "$STORIES" --prompt "Lily and Tom went to the park" -n 48 --print-ids -fa on -t 2)
for args in "--batch 1" "-t 1 --batch 3"; do
    got=$("$BIN" run --model "$STORIES" --prompt "Lily and Tom went to the park" -n 48 --print-ids -fa on $args)
    ok
    [ "$got" = "$base" ] || fail "flash ids with $args differ from batched 2 threads"
done
rm -f "$QWEN"
done_testing
