# test_tokenize_cli.sh -- `pocketllm tokenize` as a user types it, on the
# real checkpoint stories260K (SentencePiece, 512 tokens).  Expected ids
# and pieces are llama.cpp v0.4.0's (pl_oracle tokenize / pieces);
# agreement on many more strings and vocabularies is tests/oracle/test_tok_*.
. "$(dirname "$0")/lib.sh"
M=$PL_SHARED/models/stories260K.gguf
[ -f "$M" ] || { fail "$M is missing"; done_testing; exit 1; }

# help and usage errors (exit 2)
expect_rc 0 "$PL_BIN" tokenize --help && expect_grep "--pieces" "$PL_TMP/out" && expect_grep "--no-bos" "$PL_TMP/out"
expect_rc 2 "$PL_BIN" tokenize
expect_rc 2 "$PL_BIN" tokenize --text hi
expect_rc 2 "$PL_BIN" tokenize --model "$M"
expect_rc 2 "$PL_BIN" tokenize --model "$M" --text a --file b
expect_rc 2 "$PL_BIN" tokenize --model "$M" --text a --bogus
expect_rc 2 "$PL_BIN" tokenize --model "$M" --text
# runtime errors (exit 1, one line naming the file)
expect_rc 1 "$PL_BIN" tokenize --model "$PL_TMP/nope.gguf" --text a && expect_grep "nope.gguf" "$PL_TMP/err"
printf 'not a gguf' >"$PL_TMP/bad.gguf"
expect_rc 1 "$PL_BIN" tokenize --model "$PL_TMP/bad.gguf" --text a
expect_rc 1 "$PL_BIN" tokenize --model "$M" --file "$PL_TMP/missing.txt" && expect_grep "missing.txt" "$PL_TMP/err"

# ids on one line: BOS as the vocabulary asks, or not
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text "Once upon a time"
ok; [ "$(cat "$PL_TMP/out")" = "1 403 407 261 378" ] || fail "ids: '$(cat "$PL_TMP/out")'"
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text "Once upon a time" --no-bos
ok; [ "$(cat "$PL_TMP/out")" = "403 407 261 378" ] || fail "--no-bos: '$(cat "$PL_TMP/out")'"
# special tokens in the text: parsed, or plain text with --no-special
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text "<s>Once"
ok; [ "$(cat "$PL_TMP/out")" = "1 1 403" ] || fail "special: '$(cat "$PL_TMP/out")'"
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text "<s>Once" --no-special --no-bos
ok; [ "$(cat "$PL_TMP/out")" = "410 504 419 505 441 416 331" ] || fail "--no-special: '$(cat "$PL_TMP/out")'"
# a file, byte for byte (the new line kept), and standard input
printf 'Lily\nsmiled.' >"$PL_TMP/in.txt"
expect_rc 0 "$PL_BIN" tokenize --model "$M" --file "$PL_TMP/in.txt"
ok; [ "$(cat "$PL_TMP/out")" = "1 317 13 419 423 290 266 426" ] || fail "--file: '$(cat "$PL_TMP/out")'"
ok; [ "$(printf 'Lily\nsmiled.' | "$PL_BIN" tokenize --model "$M" --file -)" = "1 317 13 419 423 290 266 426" ] ||
    fail "--file - (stdin) differs"
# empty text: just BOS
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text ""
ok; [ "$(cat "$PL_TMP/out")" = "1" ] || fail "empty: '$(cat "$PL_TMP/out")'"
# --pieces: id, tab, the piece in quotes
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text "Once upon" --pieces
ok; [ "$(cat "$PL_TMP/out")" = "$(printf "1\t'<s>'\n403\t' Once'\n407\t' upon'")" ] || fail "--pieces: '$(cat "$PL_TMP/out")'"
# a new line and an unknown character's byte tokens are escaped
expect_rc 0 "$PL_BIN" tokenize --model "$M" --text "$(printf 'a\n\xe6\x97\xa5')" --pieces --no-bos
expect_grep "'\\n'" "$PL_TMP/out"
expect_grep "'\\xe6'" "$PL_TMP/out"
done_testing
