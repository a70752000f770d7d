# test_forward_arch.sh -- the other members of the family against
# llama.cpp: a llama-architecture synth checkpoint (rotary on adjacent
# pairs, untied output, f32 and f16) and qwen2 checkpoints with Q/K/V biases
# (written by pl_tinymodel with the synth tokenizer, since synth makes no
# qwen2), f32 and f16, one and several KV heads.  Same rules as
# test_forward_qwen3.sh: greedy ids up to llama.cpp's first near-tie,
# teacher-forced argmax on every decidable position, the largest logit
# difference relative to the range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"

check() {
    local name=$1 model=$2 kv=$3 margin=$4 rel=$5
    for prompt in "Once upon a time" "The quick brown fox"; do
        greedy_check "$name '$prompt'" "$model" "$kv" "$margin" 48 --prompt "$prompt"
    done
    logits_check "$name" "$model" "$kv" "$margin" "$rel" "$GREEDY_IDS"
}

# llama (synth); margins as in test_forward_qwen3.sh for untied models
for shape in tiny small; do
    for type in f32 f16; do
        f="$PL_TMP/llama-$shape-$type.gguf"
        expect_rc 0 "$BIN" synth --quiet --arch llama --shape "$shape" --type "$type" --untied --seed 5 "$f" || continue
        if [ $type = f32 ]; then check "llama $shape f32" "$f" f32 0.0005 1e-5; fi
        check "llama $shape $type" "$f" f16 0.01 1e-3
        rm -f "$f"
    done
done

# qwen2 with biases, the synth byte-level tokenizer copied in
expect_rc 0 "$BIN" synth --quiet --shape tiny --seed 1 "$PL_TMP/vocab.gguf"
for type in f32 f16; do
    for kvh in 2 1; do
        f="$PL_TMP/qwen2-$type-$kvh.gguf"
        expect_rc 0 "$PL_TOOLS/pl_tinymodel" "$f" --arch qwen2 --qkv-bias --type "$type" --n-embd 128 --n-layer 3 \
            --n-head 4 --n-head-kv "$kvh" --head-dim 32 --n-ff 256 --seed 3 --vocab-from "$PL_TMP/vocab.gguf" || continue
        if [ $type = f32 ]; then check "qwen2 f32 kv-heads $kvh" "$f" f32 0.0005 1e-5; fi
        check "qwen2 $type kv-heads $kvh" "$f" f16 0.01 1e-3
        rm -f "$f"
    done
done
done_testing
