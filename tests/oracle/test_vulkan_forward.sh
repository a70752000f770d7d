# test_vulkan_forward.sh -- the forward pass on the Vulkan backend against
# llama.cpp (CPU): stories260K with f16 and f32 caches, attention by
# llama.cpp's default and flash arithmetic, batched and one token a pass;
# random-weight qwen3 (tied and untied output) in f16 and q8_0; the qwen3vl
# text architecture in f16.  The same
# comparisons and bounds as the CPU's tests (test_forward_stories.sh,
# test_forward_flash.sh, test_forward_qwen3.sh): greedy ids identical up to
# llama.cpp's first undecidable step, teacher-forced logits within the same
# fraction of the logit range.
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/forward_lib.sh"
MODEL=$PL_SHARED/models/stories260K.gguf

for fa in off on; do
    FA=$fa
    FA_OTHER=$([ "$FA" = on ] && echo off || echo on)
    for kv in f16 f32; do
        if [ $kv = f16 ] || [ $fa = on ]; then margin=0.02; rel=1e-3; else margin=0.002; rel=1e-5; fi
        greedy_check "vulkan stories260K from BOS" "$MODEL" $kv $margin 64 --ids 1
        logits_check "vulkan stories260K from BOS" "$MODEL" $kv $margin $rel "$GREEDY_IDS"
        greedy_check "vulkan stories260K 'Lily and Tom went to the park'" "$MODEL" $kv $margin 64 \
            --prompt "Lily and Tom went to the park"
        logits_check "vulkan stories260K 'Lily and Tom went to the park'" "$MODEL" $kv $margin $rel "$GREEDY_IDS"
    done
done
FA=off
FA_OTHER=on

# the same ids whatever the prefill pass size (matrix-vector and GEMM paths)
base=$("$BIN" run --model "$MODEL" --prompt "One day, a big bird" -n 48 --print-ids --device vulkan)
for args in "--batch 1" "--batch 3" "--batch 9"; do
    got=$("$BIN" run --model "$MODEL" --prompt "One day, a big bird" -n 48 --print-ids --device vulkan $args)
    ok
    [ "$got" = "$base" ] || fail "vulkan: ids with $args differ from one batched pass"
done

# qwen3, small shape: margins and bounds of test_forward_qwen3.sh
for tied in 1 0; do
    tie=""; w=10
    [ $tied = 0 ] && tie=--untied && w=1
    base="$PL_TMP/small$tie"
    m() { awk -v a="$1" -v w="$w" 'BEGIN { print a * w }'; }
    name="vulkan qwen3 small $([ $tied = 1 ] && echo tied || echo untied)"
    expect_rc 0 "$BIN" synth --quiet --shape small --type f16 $tie --seed 7 "$base-f16.gguf" || continue
    greedy_check "$name f16" "$base-f16.gguf" f16 "$(m 0.01)" 48 --prompt "Once upon a time"
    logits_check "$name f16" "$base-f16.gguf" f16 "$(m 0.01)" 1e-3 "$GREEDY_IDS"
    expect_rc 0 "$ORACLE" quantize "$base-f16.gguf" "$base-q8_0.gguf" Q8_0 --pure -t 1 && {
        greedy_check "$name q8_0" "$base-q8_0.gguf" f16 "$(m 0.15)" 48 --prompt "Once upon a time"
        logits_check "$name q8_0" "$base-q8_0.gguf" f16 "$(m 0.15)" 2e-2 "$GREEDY_IDS"
    }
    rm -f "$base"-*.gguf
done
# the qwen3vl text architecture (test_forward_qwen3vl.sh's small shape)
expect_rc 0 "$BIN" synth --quiet --arch qwen3vl --n-embd 256 --n-layer 4 --n-head 4 --n-head-kv 2 --head-dim 64 \
    --n-ff 512 --untied --seed 5 --type f16 "$PL_TMP/vl-f16.gguf" && {
    greedy_check "vulkan qwen3vl small f16" "$PL_TMP/vl-f16.gguf" f16 0.01 32 --prompt "Once upon a time"
    logits_check "vulkan qwen3vl small f16" "$PL_TMP/vl-f16.gguf" f16 0.01 1e-3 "$GREEDY_IDS"
}
done_testing
