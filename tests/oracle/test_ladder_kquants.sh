# test_ladder_kquants.sh -- issue 6's acceptance: a random-weight qwen3
# quantized by llama.cpp (with an importance matrix from `pocketllm
# imatrix`, which the K recipes use when given) to Q4_0, Q4_1, Q5_0, Q5_1,
# Q8_0, Q2_K, Q3_K_M, Q4_K_S, Q4_K_M, Q5_K_M and Q6_K, run by both engines
# (see ladder_lib.sh for what is compared and the model).
. "$(dirname "$0")/ladder_lib.sh"

# RECIPE  near-tie margin  largest logit difference / range
# Every type's activations are rounded to q8_0 or q8_K blocks before the
# integer products, as llama.cpp does; a value on a rounding boundary rounds
# the other way under a different summation order and the step carries on
# (forward_lib.sh, test_forward_qwen3.sh: q8_0 untied 0.15).  The largest
# difference seen on this model over all 18 types is 0.082 of a range of
# 7.7 (1.07%, Q4_K_M); some types are bit-identical (IQ1_M, TQ2_0, Q5_1).
# Margin 0.2 and 2% are over twice that.
ladder_run <<'EOF_LIST'
Q4_0   0.2 2e-2
Q4_1   0.2 2e-2
Q5_0   0.2 2e-2
Q5_1   0.2 2e-2
Q8_0   0.2 2e-2
Q2_K   0.2 2e-2
Q3_K_M 0.2 2e-2
Q4_K_S 0.2 2e-2
Q4_K_M 0.2 2e-2
Q5_K_M 0.2 2e-2
Q6_K   0.2 2e-2
EOF_LIST
done_testing
