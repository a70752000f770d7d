# test_quantize_pure.sh -- `pocketllm quantize` to one tensor type (every
# type llama.cpp can write a file of that needs no importance matrix),
# --pure and --leave-output with recipes, and requantizing, against
# llama-quantize's output for the same input (quantize_lib.sh: same types,
# same bytes, same metadata; llama.cpp runs ours).  Pure mode has no layer
# rules, so two layers do:
#  P   qwen3, gqa 2, tied, f16; ffn rows of 288 (the fallbacks)
#  PB  llama, gqa 4, separate output.weight, bf16
# A type name (lower case) is llama-quantize's --pure with the file type
# whose base type it is (q4_K: Q4_K_S, iq2_s: IQ2_M, ...).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quantize_lib.sh"
BIN=$PL_BIN

P=$PL_TMP/p.gguf PB=$PL_TMP/pb.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 2 --n-head 2 --n-head-kv 1 --head-dim 64 \
    --n-ff 288 --type f16 --seed 21 "$P"
expect_rc 0 "$BIN" synth --quiet --arch llama --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 1 --head-dim 64 \
    --n-ff 256 --untied --type bf16 --seed 22 "$PB"
need "$P" "$PB"

while read -r type recipe; do
    qjob "P $type" "$P" "$type" "$recipe" --pure ""
done <<'EOF'
q4_0 Q4_0
q4_1 Q4_1
q5_0 Q5_0
q5_1 Q5_1
q8_0 Q8_0
q2_K Q2_K
q3_K Q3_K_S
q4_K Q4_K_S
q5_K Q5_K_S
q6_K Q6_K
iq4_nl IQ4_NL
iq4_xs IQ4_XS
iq3_s IQ3_S
tq1_0 TQ1_0
tq2_0 TQ2_0
mxfp4 MXFP4_MOE
f16 F16
bf16 BF16
f32 F32
EOF
qjob "PB q4_K" "$PB" q4_K Q4_K_S --pure ""
qjob "PB Q4_K_M --pure" "$PB" Q4_K_M Q4_K_M --pure --pure
qjob "PB Q6_K --leave-output" "$PB" Q6_K Q6_K --leave-output --leave-output
qjob "PB Q2_K --pure --leave-output" "$PB" Q2_K Q2_K "--pure --leave-output" "--pure --leave-output"
qjob "PB q8_0 --leave-output" "$PB" q8_0 Q8_0 "--pure --leave-output" --leave-output
qrun

# requantizing: a q8_0 file to Q8_0 copies every tensor (no requantizing);
# to Q4_0 it is refused, as llama.cpp does, unless --allow-requantize
expect_rc 0 "$BIN" quantize --quiet "$P" "$PL_TMP/p8.gguf" Q8_0
need "$PL_TMP/p8.gguf"
qjob "P q8_0 file -> Q8_0 (copies)" "$PL_TMP/p8.gguf" Q8_0 Q8_0 "" ""
qjob "P q8_0 file -> Q4_0 (requantized)" "$PL_TMP/p8.gguf" Q4_0 Q4_0 --allow-requantize --allow-requantize
qrun
expect_rc 1 "$BIN" quantize "$PL_TMP/p8.gguf" "$PL_TMP/p4.gguf" Q4_0
expect_grep "allow-requantize" "$PL_TMP/err"
ok
[ -e "$PL_TMP/p4.gguf" ] || [ -e "$PL_TMP/p4.gguf.partial" ] && fail "a refused requantize left a file"
expect_rc 1 "$ORACLE" quantize "$PL_TMP/p8.gguf" "$PL_TMP/p4.gguf" Q4_0 -t 1
qtable
done_testing
