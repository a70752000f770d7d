# test_tok_detok.sh -- detokenization against llama.cpp: for each
# vocabulary, PL_TOK_N_IDS (default 2000) generated id sequences (random
# ids, special tokens, byte tokens, the tokens of generated text) give the
# bytes llama_detokenize gives, with remove_special and unparse_special
# each on and off (per-token pieces are compared in test_tok_vocab.sh).
# The streaming decoder, fed the same sequences one id at a time, with
# buffers too small first, must give exactly the one-shot bytes and never
# end a chunk inside a UTF-8 character.  Seed as in test_tok_diff.sh.
. "$(dirname "$0")/tok_lib.sh"
SEED=${PL_TOK_SEED:-20261130}
N=${PL_TOK_N_IDS:-2000}
echo "test_tok_detok: seed $SEED (PL_TOK_SEED=$SEED replays), $N id sequences per vocabulary"
for v in $TOK_VOCABS; do
    f=$(vocab_file "$v")
    expect_rc 0 "$GEN" ids "$f" "$N" "$SEED" "$PL_TMP/$v.ids" || continue
    # the two engines side by side, each in all four modes
    "$ORACLE" detokenize-batch "$f" "$PL_TMP/$v.ids" "$PL_TMP/$v.llama" --all-modes 2>"$PL_TMP/$v.err" &
    pid=$!
    expect_rc 0 "$TOOL" detok "$f" "$PL_TMP/$v.ids" "$PL_TMP/$v.ours" --all-modes
    ok
    if ! wait $pid; then
        fail "$v: pl_oracle detokenize-batch failed: $(head -c 300 "$PL_TMP/$v.err")"
    elif ! cmp -s "$PL_TMP/$v.llama" "$PL_TMP/$v.ours"; then
        fail "$v: detokenizations differ (seed $SEED): $(cmp "$PL_TMP/$v.llama" "$PL_TMP/$v.ours" 2>&1)"
    fi
    expect_rc 0 "$TOOL" stream "$f" "$PL_TMP/$v.ids" && echo "$v: $(cat "$PL_TMP/out")"
    [ -s "$PL_TMP/err" ] && cat "$PL_TMP/err" >&2
done
done_testing
