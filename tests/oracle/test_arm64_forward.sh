# test_arm64_forward.sh -- the ARM64 build under qemu against llama.cpp run
# natively by the x86 oracle (forward_lib.sh's rules): greedy ids up to
# llama.cpp's first undecidable step and teacher-forced logits, on the
# real stories260K (each tier's CPU model) and on the random-weight qwen3 of
# ladder_lib.sh quantized by llama.cpp to each type the issue names (on
# "max": the i8mm tier, whose tiles and rows kernels prefill and decode),
# and a small qwen3moe in f16, Q4_K_M and IQ2_XXS.
# The test models are made by the x86 CLI; only the runs under comparison
# are emulated.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/arm64_lib.sh"
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }

for cpu in "$ARM_CPU_NEON" "$ARM_CPU_DOTPROD" "$ARM_CPU_I8MM"; do
    export PL_RUN_BIN PL_RUN_TAG="arm64 $cpu"
    PL_RUN_BIN=$(arm_wrap "$cpu" pocketllm)
    . "$(dirname "$0")/forward_lib.sh"
    greedy_check "stories260K 'Once upon a time'" "$STORIES" f16 0.02 48 --prompt "Once upon a time"
    logits_check "stories260K 'Once upon a time'" "$STORIES" f16 0.02 1e-3 "$GREEDY_IDS"
done
greedy_check "stories260K from BOS" "$STORIES" f32 0.002 48 --ids 1
logits_check "stories260K from BOS" "$STORIES" f32 0.002 1e-5 "$GREEDY_IDS"
# the qwen3vl text architecture (test_forward_qwen3vl.sh's small shape)
expect_rc 0 "$BIN" synth --quiet --arch qwen3vl --n-embd 256 --n-layer 4 --n-head 4 --n-head-kv 2 --head-dim 64 \
    --n-ff 512 --untied --seed 5 --type f16 "$PL_TMP/vl-f16.gguf" &&
    greedy_check "qwen3vl small f16" "$PL_TMP/vl-f16.gguf" f16 0.01 32 --prompt "Once upon a time"

# the ladder on the i8mm tier (ladder_lib.sh sources forward_lib.sh again:
# PL_RUN_BIN stays the "max" wrapper)
. "$(dirname "$0")/ladder_lib.sh"
greedy_check "qwen3 F16" "$LADDER_M" f16 0.2 32 --prompt "Once upon a time"
logits_check "qwen3 F16" "$LADDER_M" f16 0.2 2e-2 "$GREEDY_IDS"
ladder_run <<'EOF_LIST'
Q8_0    0.2 2e-2
Q4_0    0.2 2e-2
Q4_K_M  0.2 2e-2
Q2_K    0.2 2e-2
Q6_K    0.2 2e-2
IQ2_XXS 0.2 2e-2
IQ4_NL  0.2 2e-2
TQ1_0   0.2 2e-2
EOF_LIST

# a mixture of experts (test_forward_moe.sh's small qwen3moe, its rules):
# the grouped expert products through the i8mm tiles and rows kernels
ladder_model "qwen3moe small" --shape moe-small --untied --seed 11
ROUTER_MARGIN=0.001 greedy_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 32 --prompt "Once upon a time"
ROUTER_MARGIN=0.001 logits_check "$LADDER_NAME F16" "$LADDER_M" f16 0.01 1e-3 "$GREEDY_IDS"
ladder_run <<'EOF_LIST'
Q4_K_M  0.2 2e-2 2e-2
IQ2_XXS 0.2 2e-2 2e-2
EOF_LIST
done_testing
