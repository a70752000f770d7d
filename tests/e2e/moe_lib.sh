# moe_lib.sh -- shared by test_inspect_moe.sh and test_bench_moe.sh: two
# small random-weight mixtures of experts that between them hold every case
# of the per-token rule: MOE_A, qwen3moe moe-small as synth
# writes Q4_K_M (q4_K experts, half the ffn_down_exps q6_K, tied
# embeddings: the table is the output matrix, read whole); MOE_B, a
# qwen2moe in f16 at explicit sizes (a shared expert, an untied output:
# the embedding table only looked up).  PYTHONPATH gets gguf_dir.py for a
# checking script.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
MOE_A=$PL_TMP/q3moe.gguf MOE_B=$PL_TMP/q2moe.gguf
expect_rc 0 "$BIN" synth --quiet --shape moe-small --type Q4_K_M --seed 5 "$MOE_A"
expect_rc 0 "$BIN" synth --quiet --shape qwen2moe-tiny --n-expert 5 --n-expert-used 3 --n-ff-exp 48 --n-ff-shexp 80 \
    --type f16 --seed 6 "$MOE_B"
export PYTHONPATH=$PL_SRC/tests/e2e${PYTHONPATH:+:$PYTHONPATH}
