# test_forward_qwen3.sh -- random-weight qwen3 checkpoints from `pocketllm
# synth` against llama.cpp: tiny and small shapes, tied and untied output,
# f32 / f16 / bf16 weights, and q8_0 (llama.cpp's own quantization of the
# f32 file, --pure); and an FFN wide enough to be run in chunks.  For each: greedy ids identical up to llama.cpp's
# first near-tie, teacher-forced argmax agreement on every decidable
# position, and the largest logit difference relative to the logit range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"

check() { forward_check "$@" 48; }

# Near-tie margins and the largest logit difference allowed, per weight
# type: each margin is at least twice the largest difference seen on these
# models (every comparison prints its own), so that a decidable step cannot
# flip.  Tied models have logits ten times wider (the embedding matrix meets
# its own rows: ranges ~40-95 against ~8 untied), hence ten times the
# margin.  Where activations are rounded to a narrow type (bf16: 2^-8,
# q8_0: 1/254 of a block's range, as llama.cpp does before every product),
# a value that sits on a rounding boundary rounds the other way under any
# change of summation order -- our scalar and AVX-512 tiers differ from each
# other that way too -- and the flip spreads through later layers and
# positions; the margins for those types are set by that, not by an error.
# tiny q8_0 with the f16 cache is bit-identical to llama.cpp.
for shape in tiny small; do
    for tied in 1 0; do
        tie=""; w=10
        [ $tied = 0 ] && tie=--untied && w=1
        base="$PL_TMP/$shape$tie"
        for type in f32 f16 bf16; do
            expect_rc 0 "$BIN" synth --quiet --shape "$shape" --type "$type" $tie --seed 7 "$base-$type.gguf" || continue
        done
        name="qwen3 $shape $([ $tied = 1 ] && echo tied || echo untied)"
        m() { awk -v a="$1" -v w="$w" 'BEGIN { print a * w }'; }
        check "$name f32" "$base-f32.gguf" f32 "$(m 0.0005)" 1e-5
        check "$name f32" "$base-f32.gguf" f16 "$(m 0.005)" 1e-3
        check "$name f16" "$base-f16.gguf" f16 "$(m 0.01)" 1e-3
        check "$name bf16" "$base-bf16.gguf" f16 "$(m 0.05)" 5e-3
        expect_rc 0 "$ORACLE" quantize "$base-f32.gguf" "$base-q8_0.gguf" Q8_0 --pure -t 1 &&
            check "$name q8_0" "$base-q8_0.gguf" f16 "$(m 0.15)" 2e-2
        rm -f "$base"-*.gguf
    done
done
# an FFN wide enough (n_ff 65536) that a prefill runs it in chunks of 32
# tokens (llama_graph.c's PL_FFN_CHUNK_BYTES): the teacher-forced pass of
# ~50 tokens takes two chunks, the greedy prefill one
W=$PL_TMP/wide-ffn-f16.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-layer 2 --n-embd 64 --n-head 2 --n-head-kv 1 --head-dim 32 \
    --n-ff 65536 --type f16 --seed 11 "$W" && check "qwen3 wide FFN (prefill in chunks) f16" "$W" f16 0.01 1e-3
done_testing
