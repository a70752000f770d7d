# test_serve_batch_moe.sh -- test_serve_batch.sh on mixtures of experts,
# with the real Qwen2 vocabulary and the Qwen3 template: qwen3moe
# moe-small in f16 (16 experts, 4 used) and a qwen2moe in Q4_K_M (6
# experts, 2 used, a gated shared expert; quantized experts take the int8
# activation kernels).  A pass of several sequences runs moe_ffn over all
# their tokens grouped by expert, and every greedy and seeded answer must
# still be the same alone and beside three others, with passes that really
# hold four sequences.
here=$(dirname "$0")
rc=0
PL_SERVE_SYNTH="--shape moe-small --type f16 --seed 21" bash "$here/test_serve_batch.sh" || rc=1
PL_SERVE_SYNTH="--shape qwen2moe-tiny --n-embd 256 --head-dim 64 --n-ff-exp 256 --n-ff-shexp 512 --type Q4_K_M --seed 3" \
    bash "$here/test_serve_batch.sh" || rc=1
exit $rc
