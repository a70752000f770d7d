# test_forward_moe.sh -- issue 17's acceptance on the CPU: random-weight
# mixtures of experts against llama.cpp (forward_lib.sh's rules: greedy ids
# identical up to llama.cpp's first undecidable step, teacher-forced argmax
# agreement at every decidable position, the largest logit difference
# within a stated fraction of the range), in f16 and quantized BY LLAMA.CPP
# (ladder_lib.sh) to q8_0, Q4_K_M, Q3_K_M, Q2_K and IQ2_XXS (with an
# importance matrix from `pocketllm imatrix`, which collects the experts'
# rows per expert):
#  - qwen3moe, 4 layers of 256, 16 experts (4 used) of FFN 256 -- also with
#    flash attention on;
#  - qwen2moe, 4 layers of 256, 6 experts (2 used) of FFN 256 and a shared
#    expert of FFN 512 behind its sigmoid gate;
#  - qwen3moe at Qwen3-30B-A3B's widths (n_embd 2048, 128 experts, 8 used,
#    FFN 768, 32 heads of 128, 4 KV heads, its 151936-token vocabulary),
#    cut to one layer for the suite's time.
# Bounds are the dense models' (test_forward_qwen3.sh, test_ladder_*.sh).
LADDER_MODEL_LATER=1 . "$(dirname "$0")/ladder_lib.sh"

# the unquantized file itself, then each recipe
f16_check() {
    ROUTER_MARGIN=0.001 greedy_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 32 --prompt "Once upon a time"
    ROUTER_MARGIN=0.001 logits_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 1e-3 "$GREEDY_IDS"
}

ladder_model "qwen3moe small" --shape moe-small --untied --seed 11
f16_check
FA=on ROUTER_MARGIN=0.001 greedy_check "qwen3moe small F16" "$LADDER_M" f16 0.01 32 --prompt "The quick brown fox"
ladder_run <<'EOF_LIST'
Q8_0    0.2 2e-2 2e-2
Q4_K_M  0.2 2e-2 2e-2
Q3_K_M  0.2 2e-2 2e-2
Q2_K    0.2 2e-2 2e-2
IQ2_XXS 0.2 2e-2 2e-2
EOF_LIST

ladder_model "qwen2moe small" --shape qwen2moe-tiny --n-embd 256 --head-dim 64 --n-ff-exp 256 --n-ff-shexp 512 \
    --untied --seed 12
f16_check
ladder_run <<'EOF_LIST'
Q8_0    0.2 2e-2 2e-2
Q4_K_M  0.2 2e-2 2e-2
Q2_K    0.2 2e-2 2e-2
IQ2_XXS 0.2 2e-2 2e-2
EOF_LIST

ladder_model "qwen3moe 30B-A3B widths, 1 layer" --shape qwen3moe-30b-a3b --n-layer 1 --seed 13
f16_check
ladder_run <<'EOF_LIST'
Q4_K_M  0.2 2e-2 2e-2
EOF_LIST
rm -f "$LADDER_M"
done_testing
