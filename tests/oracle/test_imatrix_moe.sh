# test_imatrix_moe.sh -- `pocketllm imatrix` on mixture-of-experts models
# against llama-imatrix's collection (pl_oracle perplexity --imatrix-out:
# its collector over the same text and windows, MUL_MAT_ID included):
#  1. the files agree as in test_imatrix.sh -- the same entries in the same
#     order, chunk_count and chunk_size, every count equal, every column's
#     sum of squares within 0.1% -- where the expert tensors carry one row
#     of sums and one count per expert (every (token, slot) routed to its
#     expert), on a qwen3moe and a qwen2moe (router, shared expert and its
#     gate), 2 layers, f32 weights (with f16 ones both engines round the
#     products' inputs to f16 first, and an expert reached by a handful of
#     tokens keeps the odd f16 rounding flip unaveraged);
#  2. llama.cpp's quantizer given our file writes the bytes ours writes from
#     it (IQ2_XXS, which needs the per-expert rows, and Q4_K_M), and runs
#     the result; ours given llama.cpp's file equals llama.cpp given it.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_SRC/tests/oracle/data/eval_story.txt
CMP=$PL_TOOLS/pl_imatrix_cmp
IGN=(--ignore-key quantize.imatrix.file --ignore-key quantize.imatrix.dataset
     --ignore-key quantize.imatrix.entries_count --ignore-key quantize.imatrix.chunks_count)

Q3=$PL_TMP/q3moe.gguf Q2=$PL_TMP/q2moe.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3moe --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 --head-dim 64 \
    --n-expert 8 --n-expert-used 2 --n-ff-exp 128 --type f32 --seed 51 "$Q3"
expect_rc 0 "$BIN" synth --quiet --arch qwen2moe --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 4 --head-dim 64 \
    --n-expert 8 --n-expert-used 2 --n-ff-exp 128 --n-ff-shexp 256 --type f32 --seed 52 "$Q2"

compare() { # compare LABEL MODEL : our imatrix and llama.cpp's, as $PL_TMP/LABEL.{ours,ref}
    local label=$1 model=$2
    expect_rc 0 "$ORACLE" perplexity "$model" --file "$T" --ctx 128 --chunks 4 -t 2 \
        --imatrix-out "$PL_TMP/$label.ref" || return 1
    expect_rc 0 "$BIN" imatrix --quiet --model "$model" --file "$T" --ctx 128 --chunks 4 -t 2 \
        --out "$PL_TMP/$label.ours" || return 1
    # a reference without expert rows would make the comparison empty
    ok
    "$BIN" inspect --tensors "$PL_TMP/$label.ref" | grep -q "ffn_up_exps.weight.counts *f32 *1 x 8" ||
        { fail "$label: llama.cpp's collection has no per-expert rows (pl_oracle's im_collect must take MUL_MAT_ID)"; return 1; }
    "$CMP" "$PL_TMP/$label.ours" "$PL_TMP/$label.ref" --rel 1e-3 >"$PL_TMP/cmp" 2>&1
    local rc=$?
    ok
    echo "$label: $(cat "$PL_TMP/cmp")" >&2
    [ $rc = 0 ] || fail "$label: our importance matrix differs from llama.cpp's: $(cat "$PL_TMP/cmp")"
}

# every expert tensor as llama-imatrix writes it: [columns, 8] sums and
# [1, 8] counts; the router a plain matrix
layout() { # layout LABEL
    expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/$1.ours" || return
    /usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "$1: the expert entries are not laid out as llama-imatrix's"
import json, sys
j = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in j["tensors"]}
for il in range(2):
    for w in ("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"):
        n = "blk.%d.%s.weight" % (il, w)
        s, c = t[n + ".in_sum2"], t[n + ".counts"]
        assert s["shape"][1:] == [8] and c["shape"] == [1, 8], (n, s["shape"], c["shape"])
    assert t["blk.%d.ffn_gate_inp.weight.counts" % il]["shape"] in ([1], [1, 1]), "the router is a matrix"
PY
    ok
}

compare q3 "$Q3"
layout q3
compare q2 "$Q2"
layout q2

# 2. quantizing with the collected matrices: llama.cpp and ours, same file
quant() { # quant LABEL MODEL RECIPE IMATRIX
    local label=$1 model=$2 recipe=$3 im=$4
    expect_rc 0 "$ORACLE" quantize "$model" "$PL_TMP/ref.gguf" "$recipe" --imatrix "$im" -t 2 || return
    expect_rc 0 "$BIN" quantize --quiet "$model" "$PL_TMP/our.gguf" "$recipe" --imatrix "$im" || return
    "$PL_TOOLS/pl_quant_diff" "$PL_TMP/our.gguf" "$PL_TMP/ref.gguf" "${IGN[@]}" >"$PL_TMP/qdiff" 2>&1
    ok
    grep -q "^equal:" "$PL_TMP/qdiff" || fail "$label: our file differs from llama.cpp's: $(head -c 300 "$PL_TMP/qdiff")"
    expect_rc 0 "$ORACLE" greedy "$PL_TMP/our.gguf" --ids "1 2 3" -n 4 --fa off --kv f16 -t 1
    ok
    [ "$(wc -w <"$PL_TMP/out")" -ge 1 ] || fail "$label: llama.cpp generated nothing from our file"
}
quant "q3 IQ2_XXS, our imatrix" "$Q3" IQ2_XXS "$PL_TMP/q3.ours"
quant "q3 Q4_K_M, our imatrix" "$Q3" Q4_K_M "$PL_TMP/q3.ours"
quant "q2 IQ2_XXS, our imatrix" "$Q2" IQ2_XXS "$PL_TMP/q2.ours"
quant "q2 IQ2_XXS, llama.cpp's imatrix" "$Q2" IQ2_XXS "$PL_TMP/q2.ref"
done_testing
