# test_imatrix.sh -- `pocketllm imatrix` against llama.cpp's own collection:
# pl_oracle perplexity --imatrix-out runs llama-imatrix's collector (a
# cb_eval callback on every MUL_MAT, every position's output requested) over
# the same text and windows, and writes llama-imatrix's file with ggml's
# gguf writer.  Then:
#  1. the files agree: the same entries in the same order, the same token
#     counts, chunk_count and chunk_size, every column's sum of squares
#     within 0.1% (both engines' activations differ by float rounding only:
#     1e-5 on average, 4e-4 at worst seen, in ffn_down inputs);
#     on stories260K (with and without --process-output) and on a qwen3
#     with 256-wide rows and tied embeddings (token_embd is never collected);
#  2. llama.cpp's quantizer takes our file (IQ2_XXS, which refuses to run
#     without one) and its result equals ours from the same file byte for
#     byte (tensors and metadata, but the quantize.imatrix.* keys only the
#     llama-quantize tool writes); llama.cpp runs it; ours takes llama.cpp's
#     file too; our IQ3_S and IQ3_M made with our file run in llama.cpp;
#  3. the metadata llama-imatrix writes: general.type, imatrix.datasets.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
S=$PL_SHARED/models/stories260K.gguf
T=$PL_SRC/tests/oracle/data/eval_story.txt
CMP=$PL_TOOLS/pl_imatrix_cmp
[ -f "$S" ] || { fail "missing $S"; done_testing; exit 1; }

compare() { # compare LABEL MODEL CTX CHUNKS [--process-output]
    local label=$1 model=$2 ctx=$3 chunks=$4
    shift 4
    expect_rc 0 "$ORACLE" perplexity "$model" --file "$T" --ctx "$ctx" --chunks "$chunks" -t 1 \
        --imatrix-out "$PL_TMP/ref.imatrix" "$@" || return 1
    local ref_ppl
    ref_ppl=$(awk '{print $1}' "$PL_TMP/out")
    expect_rc 0 "$BIN" imatrix --quiet --model "$model" --file "$T" --ctx "$ctx" --chunks "$chunks" \
        --out "$PL_TMP/ours.imatrix" "$@" || return 1
    echo "$label: $(cat "$PL_TMP/out") -- llama.cpp's perplexity $ref_ppl" >&2
    "$CMP" "$PL_TMP/ours.imatrix" "$PL_TMP/ref.imatrix" --rel 1e-3 >"$PL_TMP/cmp" 2>&1
    local rc=$?
    ok
    echo "$label: $(cat "$PL_TMP/cmp")" >&2
    [ $rc = 0 ] || fail "$label: our importance matrix differs from llama.cpp's: $(cat "$PL_TMP/cmp")"
}

compare "stories260K" "$S" 128 10
compare "stories260K --process-output" "$S" 128 10 --process-output
# output.weight collected, with the 35 blk.* matrices
expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/ours.imatrix" &&
    /usr/bin/python3 - "$PL_TMP/out" "$T" <<'PY' || fail "stories260K imatrix: entries or metadata are not llama-imatrix's"
import json, sys
j = json.load(open(sys.argv[1]))
names = [t["name"] for t in j["tensors"]]
assert len(names) == 72 and "output.weight.in_sum2" in names and "output.weight.counts" in names, names[:6]
# pairs in_sum2, counts per weight, the weights in byte order of their names
weights = [n[:-len(".in_sum2")] for n in names[0::2]]
assert names[1::2] == [w + ".counts" for w in weights] and all(n.endswith(".in_sum2") for n in names[0::2]), names[:4]
assert weights == sorted(weights, key=lambda n: n.encode()), "not in name order"
m = j["metadata"]
assert m["general.type"] == "imatrix" and m["imatrix.datasets"] == [sys.argv[2]], m
assert m["imatrix.chunk_count"] == 10 and m["imatrix.chunk_size"] == 128, m
PY
ok

Q=$PL_TMP/qwen3.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 --head-dim 64 \
    --n-ff 512 --type f16 --seed 21 "$Q"
compare "qwen3 256-wide tied" "$Q" 128 4
cp "$PL_TMP/ours.imatrix" "$PL_TMP/q_ours.imatrix"
cp "$PL_TMP/ref.imatrix" "$PL_TMP/q_ref.imatrix"

# 2. llama.cpp quantizes with our imatrix; the bytes equal ours; llama.cpp runs it
expect_rc 0 "$ORACLE" quantize "$Q" "$PL_TMP/ref_iq2.gguf" IQ2_XXS --imatrix "$PL_TMP/q_ours.imatrix" -t 1
expect_rc 0 "$BIN" quantize --quiet "$Q" "$PL_TMP/our_iq2.gguf" IQ2_XXS --imatrix "$PL_TMP/q_ours.imatrix"
"$PL_TOOLS/pl_quant_diff" "$PL_TMP/our_iq2.gguf" "$PL_TMP/ref_iq2.gguf" --ignore-key quantize.imatrix.file \
    --ignore-key quantize.imatrix.dataset --ignore-key quantize.imatrix.entries_count \
    --ignore-key quantize.imatrix.chunks_count >"$PL_TMP/qdiff" 2>&1
ok
grep -q "^equal:" "$PL_TMP/qdiff" || fail "IQ2_XXS with our imatrix: our file differs from llama.cpp's: $(head -c 300 "$PL_TMP/qdiff")"
expect_rc 0 "$ORACLE" greedy "$PL_TMP/our_iq2.gguf" --ids "1 2 3" -n 4 --fa off --kv f16 -t 1
ok
[ "$(wc -w <"$PL_TMP/out")" -ge 1 ] || fail "llama.cpp generated nothing from the IQ2_XXS file"
# the IQ recipes test_quantize_imatrix.sh does not quantize with an
# importance matrix (test_quantize.sh runs them without one): ours with
# ours, and llama.cpp runs the result
for r in IQ3_S IQ3_M; do
    expect_rc 0 "$BIN" quantize --quiet "$Q" "$PL_TMP/our_$r.gguf" "$r" --imatrix "$PL_TMP/q_ours.imatrix" || continue
    expect_rc 0 "$ORACLE" greedy "$PL_TMP/our_$r.gguf" --ids "1 2 3" -n 4 --fa off --kv f16 -t 1
    ok
    [ "$(wc -w <"$PL_TMP/out")" -ge 1 ] || fail "llama.cpp generated nothing from our $r file"
done
# and ours reads llama.cpp's imatrix (written by ggml's gguf code)
expect_rc 0 "$BIN" quantize --quiet "$Q" "$PL_TMP/our_iq2b.gguf" IQ2_XXS --imatrix "$PL_TMP/q_ref.imatrix"
done_testing
