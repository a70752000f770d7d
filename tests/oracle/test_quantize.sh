# test_quantize.sh -- `pocketllm quantize` to every llama.cpp recipe that
# needs no importance matrix, against llama-quantize's own output for the
# same input (see quantize_lib.sh: same per-tensor types, same bytes, same
# metadata, and llama.cpp runs our file).  Three inputs:
#  A  qwen3, 8 layers (llama.cpp's first/last-eighth rules need 8), gqa 2,
#     tied embeddings, f16; rows of 96 in ffn_down and of 128 in
#     attn_output (not whole 256-blocks: the k-quant fallbacks, which keep
#     the per-layer choices visible: q6_K -> q8_0, q4_K -> q5_0, ...).
#     Every recipe.
#  B  llama, 8 layers, gqa 4, a separate output.weight, bf16 input, all
#     rows whole 256-blocks: the recipes whose choices depend on those.
#  C  qwen3, width 80 (not even whole 32-blocks: the f16 fallback), 2
#     layers, f32 input.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quantize_lib.sh"
BIN=$PL_BIN

A=$PL_TMP/a.gguf B=$PL_TMP/b.gguf C=$PL_TMP/c.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 8 --n-head 2 --n-head-kv 1 --head-dim 64 \
    --n-ff 96 --type f16 --seed 11 "$A"
expect_rc 0 "$BIN" synth --quiet --arch llama --n-embd 256 --n-layer 8 --n-head 4 --n-head-kv 1 --head-dim 64 \
    --n-ff 256 --untied --type bf16 --seed 12 "$B"
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 80 --n-layer 2 --n-head 2 --n-head-kv 1 --head-dim 40 \
    --n-ff 96 --type f32 --seed 13 "$C"
need "$A" "$B" "$C"

for r in Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K \
         IQ4_NL IQ4_XS IQ3_S IQ3_M TQ1_0 TQ2_0 F16 BF16 F32 MXFP4_MOE; do
    qjob "A $r" "$A" "$r" "$r" "" ""
done
# gqa 4 (attn_v of Q2_K, IQ3_S, IQ4_*), untied (output and token_embd
# apart: Q5_K_S, TQ1_0), the use_more_bits layers of Q4_K_M/Q3_K_M
for r in Q2_K Q3_K_M Q4_K_M Q5_K_S IQ4_XS IQ3_S TQ1_0 Q8_0 BF16; do
    qjob "B $r" "$B" "$r" "$r" "" ""
done
for r in Q4_0 Q4_K_M IQ4_XS TQ2_0 F16; do qjob "C $r" "$C" "$r" "$r" "" ""; done
# llama-quantize's alias
qjob "A Q4_K (alias of Q4_K_M)" "$A" Q4_K Q4_K_M "" ""
qrun
qtable
done_testing
