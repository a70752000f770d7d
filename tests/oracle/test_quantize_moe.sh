# test_quantize_moe.sh -- `pocketllm quantize` on mixture-of-experts
# checkpoints against llama-quantize's output for the same input
# (quantize_lib.sh: same types, same bytes, same metadata, llama.cpp runs
# ours): 3-D expert tensors quantized expert by expert (with each expert's
# row of the importance matrix), the router kept, the layer of an expert
# tensor read from its name, the rules that depend on the expert count,
# qwen2moe's shared expert.  Inputs (random weights from synth):
#  E8   qwen3moe, 8 layers (the first/last-eighth rules), 8 experts (the
#       Mixtral rules: attn_v/attn_k q8_0, attn_output q5_K), gqa 4, tied,
#       f16; experts' ffn 96 wide (ffn_down_exps rows not whole 256-blocks:
#       the fallbacks)
#  E6   qwen3moe, 8 layers, 6 experts, gqa 2, untied, bf16, rows whole blocks
#  Q2   qwen2moe, 8 layers, 4 experts (>= 4: attn_v q4_K under IQ2), shared
#       expert (its ffn_down shares llama.cpp's ffn_down counter), gqa 1
#  W30  Qwen3-30B-A3B's widths cut to one layer and 16 of its 128 experts
#       (experts of 768, 32 heads / 4 KV of 128) and a byte vocabulary,
#       Q4_K_M (all 128 experts made the test minutes longer for the same
#       code: experts are quantized one at a time)
# Recipes: Q4_K_M and Q2_K on every input (the acceptance pair); the other
# rungs where MoE changes a rule (Q3_K_M/Q3_K_S, IQ4_XS, MXFP4_MOE, IQ3_M,
# Q5_K_S, Q6_K, the IQ2s with a matrix); q8_0 / q4_0 / q5_K_M's tensor
# rules are the dense ones, proven by test_quantize.
# Then the refusals, each one line with no file left: expert tensors, a
# router or expert_used_count that disagree with expert_count, a 3-D tensor
# where a matrix belongs, importance rows that do not match the experts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quantize_lib.sh"
BIN=$PL_BIN
EDIT=$PL_TOOLS/pl_gguf_edit GEN=$PL_TOOLS/pl_imatrix_gen
QIGNORE="quantize.imatrix.file quantize.imatrix.dataset quantize.imatrix.entries_count quantize.imatrix.chunks_count"

E8=$PL_TMP/e8.gguf E6=$PL_TMP/e6.gguf Q2=$PL_TMP/q2.gguf W30=$PL_TMP/w30.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3moe --n-embd 256 --n-layer 8 --n-head 4 --n-head-kv 1 --head-dim 64 \
    --n-expert 8 --n-expert-used 2 --n-ff-exp 96 --type f16 --seed 41 "$E8"
expect_rc 0 "$BIN" synth --quiet --arch qwen3moe --n-embd 256 --n-layer 8 --n-head 4 --n-head-kv 2 --head-dim 64 \
    --n-expert 6 --n-expert-used 2 --n-ff-exp 256 --untied --type bf16 --seed 42 "$E6"
expect_rc 0 "$BIN" synth --quiet --arch qwen2moe --n-embd 256 --n-layer 8 --n-head 4 --n-head-kv 4 --head-dim 64 \
    --n-expert 4 --n-expert-used 2 --n-ff-exp 64 --n-ff-shexp 128 --type f16 --seed 43 "$Q2"
expect_rc 0 "$BIN" synth --quiet --arch qwen3moe --n-embd 2048 --n-layer 1 --n-head 32 --n-head-kv 4 --head-dim 128 \
    --n-ff 6144 --n-expert 16 --n-expert-used 8 --n-ff-exp 768 --untied --type f16 --seed 44 "$W30"
IM8=$PL_TMP/e8.imatrix IM6=$PL_TMP/e6.imatrix IMQ2=$PL_TMP/q2.imatrix
expect_rc 0 "$GEN" "$E8" "$IM8"
expect_rc 0 "$GEN" "$E6" "$IM6"
expect_rc 0 "$GEN" "$Q2" "$IMQ2"
expect_rc 0 "$GEN" "$E8" "$PL_TMP/zero.imatrix" --zero-count blk.2.ffn_up_exps.weight
need "$E8" "$E6" "$Q2" "$W30" "$IM8" "$IM6" "$IMQ2" "$PL_TMP/zero.imatrix"

for r in Q4_K_M Q2_K Q3_K_M IQ4_XS MXFP4_MOE; do qjob "E8 $r" "$E8" "$r" "$r" "" ""; done
for r in Q4_K_M Q2_K Q3_K_S Q6_K; do qjob "E6 $r" "$E6" "$r" "$r" "" ""; done
for r in Q4_K_M Q2_K Q5_K_S IQ3_M; do qjob "Q2 $r" "$Q2" "$r" "$r" "" ""; done
qjob "E6 Q4_K_M --leave-output" "$E6" Q4_K_M Q4_K_M --leave-output --leave-output
qjob "E8 q4_K (pure)" "$E8" q4_K Q4_K_S --pure ""
# per-expert importance rows (pl_imatrix_gen writes one per expert)
qjob "E8 IQ2_XXS (imatrix)" "$E8" IQ2_XXS IQ2_XXS "--imatrix $IM8" "--imatrix $IM8"
qjob "E8 Q4_K_M (imatrix)" "$E8" Q4_K_M Q4_K_M "--imatrix $IM8" "--imatrix $IM8"
qjob "E8 Q4_K_M (an expert tensor's counts 0)" "$E8" Q4_K_M Q4_K_M "--imatrix $PL_TMP/zero.imatrix" \
    "--imatrix $PL_TMP/zero.imatrix"
qjob "E6 IQ2_XS (imatrix)" "$E6" IQ2_XS IQ2_XS "--imatrix $IM6" "--imatrix $IM6"
qjob "Q2 IQ2_XXS (imatrix)" "$Q2" IQ2_XXS IQ2_XXS "--imatrix $IMQ2" "--imatrix $IMQ2"
qjob "Q2 Q2_K_S (imatrix)" "$Q2" Q2_K_S Q2_K_S "--imatrix $IMQ2" "--imatrix $IMQ2"
qjob "W30 Q4_K_M (Qwen3-30B-A3B widths)" "$W30" Q4_K_M Q4_K_M "-t 2" ""
qrun
rm -f "$W30"

# refused: one line, exit 1, no file
refused() { # refused LABEL WANT-IN-MESSAGE MODEL ARGS...
    local label=$1 want=$2 model=$3
    shift 3
    rm -f "$PL_TMP/no.gguf" "$PL_TMP/no.gguf.partial"
    expect_rc 1 "$BIN" quantize "$model" "$PL_TMP/no.gguf" "$@" || return
    expect_grep "$want" "$PL_TMP/err"
    ok
    [ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "$label: the error is not one line: $(cat "$PL_TMP/err")"
    ok
    { [ -e "$PL_TMP/no.gguf" ] || [ -e "$PL_TMP/no.gguf.partial" ]; } && fail "$label: a refused run left a file"
}
bad() { # bad NAME EDITS... : a damaged copy of E8
    "$EDIT" "$E8" "$PL_TMP/$1.gguf" "${@:2}" || fail "pl_gguf_edit could not make $1"
}
bad count --set-u32 qwen3moe.expert_count 16
refused "expert_count 16, experts 8" "8 experts, but qwen3moe.expert_count is 16" "$PL_TMP/count.gguf" Q4_K_M
bad split --shape blk.3.ffn_down_exps.weight 96,512,4
refused "an expert tensor of 4 experts" "ffn_down_exps.weight is [96, 512, 4, 1]: 4 experts" "$PL_TMP/split.gguf" Q2_K
bad q3d --shape blk.0.attn_q.weight 256,128,2
refused "a 3-D attn_q" "blk.0.attn_q.weight is [256, 128, 2, 1], where qwen3moe has a matrix" "$PL_TMP/q3d.gguf" Q8_0
bad router --shape blk.5.ffn_gate_inp.weight 512,4
refused "a router of 4 rows" "the router blk.5.ffn_gate_inp.weight has 4 rows" "$PL_TMP/router.gguf" Q4_K_M
bad used --set-u32 qwen3moe.expert_used_count 9
refused "9 used of 8" "uses 9 experts per token of 8" "$PL_TMP/used.gguf" Q4_K_M
bad noused --drop-key qwen3moe.expert_used_count
refused "no expert_used_count" "expert_used_count is missing or 0" "$PL_TMP/noused.gguf" Q4_K_M
bad noexp --drop-key qwen3moe.expert_count --drop-key qwen3moe.expert_used_count
refused "no expert_count" "holds experts, but the model has no qwen3moe.expert_count" "$PL_TMP/noexp.gguf" Q4_K_M
# importance rows: 4 rows of counts for 8 experts (the same number of
# values); one expert row a column short, and another model's rows (which
# llama.cpp refuses too)
"$EDIT" "$IM8" "$PL_TMP/rows.imatrix" --shape blk.1.ffn_up_exps.weight.in_sum2 512,4 \
    --shape blk.1.ffn_up_exps.weight.counts 1,4 || fail "pl_gguf_edit could not make rows.imatrix"
refused "4 importance rows for 8 experts" "has 4 rows of counts, the tensor 8 experts" "$E8" Q4_K_M \
    --imatrix "$PL_TMP/rows.imatrix"
expect_rc 0 "$GEN" "$E8" "$PL_TMP/short.imatrix" --resize blk.4.ffn_down_exps.weight
refused "expert rows a column short" "is different from tensor size" "$E8" IQ2_XXS --imatrix "$PL_TMP/short.imatrix"
refused "another model's experts" "is different from tensor size" "$E8" Q4_K_M --imatrix "$IM6"
for f in short other; do
    im=$PL_TMP/short.imatrix
    [ $f = other ] && im=$IM6
    ok
    "$ORACLE" quantize "$E8" "$PL_TMP/no.gguf" Q4_K_M --imatrix "$im" -t 1 >/dev/null 2>&1 &&
        fail "llama.cpp quantized E8 with the $f imatrix (so should we)"
done

# the help says how experts are handled
expect_rc 0 "$BIN" quantize --help && expect_grep "expert by expert" "$PL_TMP/out"
expect_rc 0 "$BIN" imatrix --help && expect_grep "one count per" "$PL_TMP/out"
qtable
done_testing
