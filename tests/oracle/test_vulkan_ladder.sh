# test_vulkan_ladder.sh -- the width ladder on the Vulkan backend: the
# random-weight qwen3 of ladder_lib.sh quantized by llama.cpp to every
# rung the issue names, each run on the device against llama.cpp (CPU)
# with the CPU's margins and bounds (test_ladder_kquants.sh,
# test_ladder_iq.sh): greedy ids up to llama.cpp's first undecidable step,
# teacher-forced argmax agreement and the largest logit difference.
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/ladder_lib.sh"

ladder_run <<'EOF_LIST'
Q4_0    0.2 2e-2
Q8_0    0.2 2e-2
Q2_K    0.2 2e-2
Q3_K_M  0.2 2e-2
Q4_K_M  0.2 2e-2
Q5_K_M  0.2 2e-2
Q6_K    0.2 2e-2
IQ2_XXS 0.2 2e-2
IQ3_S   0.2 2e-2
IQ4_XS  0.2 2e-2
TQ2_0   0.2 2e-2
EOF_LIST
done_testing
