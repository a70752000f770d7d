# test_grammar_mask_bpe.sh -- the constrained-decoding mask on the real
# Qwen2 vocabulary of the llama.cpp bundle (151936 byte-level tokens, CJK,
# emoji, partial characters): at every step of three schema-constrained
# texts (bounded and unbounded strings, a digits pattern, non-ASCII
# strings with length bounds) the mask -- under four length budgets, in
# each of the walk's two modes -- equals asking every token alone, and
# the walk's shortcuts (subtrees taken whole, subtrees cut at a length)
# were taken (pl_grammar_mask_check).
. "$(dirname "$0")/lib.sh"
VOCAB=$LLAMA_SRC/models/ggml-vocab-qwen2.gguf
[ -f "$VOCAB" ] || { echo "FAIL: the bundle lacks $VOCAB" >&2; exit 1; }
D=$PL_SRC/tests/grammar
expect_rc 0 "$PL_TOOLS/pl_grammar_mask_check" "$VOCAB" \
    "$D/schemas/30_tool_call_search.json" "$D/mask/search.txt" \
    "$D/mask/notes.json" "$D/mask/notes.txt" \
    "$D/mask/short.json" "$D/mask/short.txt" && cat "$PL_TMP/out"
done_testing
