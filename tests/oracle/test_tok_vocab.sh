# test_tok_vocab.sh -- what a vocabulary is, as llama.cpp v0.4.0 loads it:
# for every vocabulary compared, the token count, BOS, EOS, add_bos,
# add_eos, every token's attribute bits (control, user-defined, lstrip,
# rstrip, ...) and end-of-generation flag (llama_vocab_get_attr,
# llama_vocab_is_eog), and every token's piece (llama_token_to_piece with
# special = true) are identical.
. "$(dirname "$0")/tok_lib.sh"
for v in $TOK_VOCABS; do
    f=$(vocab_file "$v")
    expect_rc 0 "$ORACLE" vocab-info "$f" "$PL_TMP/info.llama" || continue
    expect_rc 0 "$TOOL" info "$f" "$PL_TMP/info.ours" || continue
    ok
    if ! cmp -s "$PL_TMP/info.llama" "$PL_TMP/info.ours"; then
        fail "$v: vocabulary facts differ (first lines: llama.cpp | ours):"
        diff "$PL_TMP/info.llama" "$PL_TMP/info.ours" | head -6 >&2
    fi
    expect_rc 0 "$ORACLE" pieces "$f" "$PL_TMP/pieces.llama" || continue
    expect_rc 0 "$TOOL" pieces "$f" "$PL_TMP/pieces.ours" || continue
    ok
    cmp -s "$PL_TMP/pieces.llama" "$PL_TMP/pieces.ours" || fail "$v: the pieces of some token differ"
    echo "$v: $(head -1 "$PL_TMP/info.ours" | cut -d' ' -f1) tokens: attributes, end-of-generation set and pieces equal"
done
done_testing
