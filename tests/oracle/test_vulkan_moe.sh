# test_vulkan_moe.sh -- mixtures of experts on the Vulkan backend against
# llama.cpp (CPU), with the CPU's rules and bounds (test_forward_moe.sh):
# the small qwen3moe and qwen2moe in f16 and quantized by llama.cpp, and
# the Qwen3-30B-A3B widths (8 used experts of 768, n_embd 2048, 32 heads /
# 4 KV of 128) cut to one layer and 32 of the 128 experts (all 128 are
# test_forward_moe.sh's, on the CPU, for the suite's time) in Q4_K_M --
# greedy ids up to llama.cpp's first undecidable step (a near-tie of its
# logits, of its router, or where its two attention paths part),
# teacher-forced logits within the same fraction of the range.  Also: the
# same ids whatever the prefill pass size, so that the per-pair
# matrix-vector path and the grouped GEMM path of moe_ffn agree.
. "$(dirname "$0")/vulkan_lib.sh"
LADDER_MODEL_LATER=1 . "$(dirname "$0")/ladder_lib.sh"

ladder_model "vulkan qwen3moe small" --shape moe-small --untied --seed 11
ROUTER_MARGIN=0.001 greedy_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 32 --prompt "Once upon a time"
ROUTER_MARGIN=0.001 logits_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 1e-3 "$GREEDY_IDS"
base=$("$BIN" run --model "$LADDER_M" --prompt "One day, a big bird" -n 24 --print-ids --device vulkan)
for args in "--batch 1" "--batch 3" "--batch 17" "--batch 64"; do
    got=$("$BIN" run --model "$LADDER_M" --prompt "One day, a big bird" -n 24 --print-ids --device vulkan $args)
    ok
    [ "$got" = "$base" ] || fail "vulkan qwen3moe: ids with $args differ from one batched pass"
done
ladder_run <<'EOF_LIST'
Q4_K_M  0.2 2e-2 2e-2
IQ2_XXS 0.2 2e-2 2e-2
EOF_LIST

ladder_model "vulkan qwen2moe small" --shape qwen2moe-tiny --n-embd 256 --head-dim 64 --n-ff-exp 256 \
    --n-ff-shexp 512 --untied --seed 12
ROUTER_MARGIN=0.001 greedy_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 32 --prompt "Once upon a time"
ROUTER_MARGIN=0.001 logits_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 1e-3 "$GREEDY_IDS"
ladder_run <<'EOF_LIST'
Q4_K_M  0.2 2e-2 2e-2
EOF_LIST

# the 30B-A3B widths: 128 experts, 8 a token, so a 48-token pass groups
ladder_model "vulkan qwen3moe 30B-A3B widths, 1 layer, 32 experts" --shape qwen3moe-30b-a3b --n-layer 1 \
    --n-expert 32 --seed 13
ladder_run <<'EOF_LIST'
Q4_K_M  0.2 2e-2 2e-2
EOF_LIST
rm -f "$LADDER_M"
done_testing
