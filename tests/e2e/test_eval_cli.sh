# test_eval_cli.sh -- `pocketllm perplexity`, `imatrix` and `fit` as a user
# types them, on a tiny synth model (no llama.cpp needed; runs under the
# sanitizers too): the happy paths end to end, and every bad input a
# one-line error with exit 2 (usage) or 1 (runtime), no crash, no file
# left behind.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_SRC/tests/oracle/data/eval_story.txt
M=$PL_TMP/tiny.gguf
expect_rc 0 "$BIN" synth --quiet --shape tiny --n-layer 2 --seed 4 "$M"
printf 'short' >"$PL_TMP/short.txt"

for cmd in perplexity imatrix fit; do
    expect_rc 0 "$BIN" "$cmd" --help
    expect_grep "usage: pocketllm $cmd" "$PL_TMP/out"
done
expect_rc 0 "$BIN" perplexity --help
expect_grep "second half" "$PL_TMP/out"
expect_grep "llama-perplexity" "$PL_TMP/out"

# perplexity: save, compare with itself (KL exactly 0), with another model
expect_rc 0 "$BIN" perplexity --quiet --model "$M" --file "$T" --ctx 32 --chunks 3 --save-logits "$PL_TMP/b.lp"
expect_grep "perplexity: " "$PL_TMP/out"
expect_rc 0 "$BIN" perplexity --quiet --model "$M" --file "$T" --ctx 32 --chunks 3 --kl-base "$PL_TMP/b.lp" --json
expect_grep '"kl_mean": 0,' "$PL_TMP/out"
expect_grep '"top1": 1,' "$PL_TMP/out"
expect_rc 0 "$BIN" quantize --quiet "$M" "$PL_TMP/q.gguf" q4_0
expect_rc 0 "$BIN" perplexity --quiet --model "$PL_TMP/q.gguf" --file "$T" --ctx 32 --chunks 3 --kl-base "$PL_TMP/b.lp"
expect_grep "KL divergence: mean" "$PL_TMP/out"
expect_grep "top-1 agreement" "$PL_TMP/out"

# usage errors: exit 2
expect_rc 2 "$BIN" perplexity --file "$T"
expect_rc 2 "$BIN" perplexity --model "$M"
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --ctx 3
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --ctx 99999999999
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --ctx abc
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --chunks 0
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --save-logits a --kl-base b
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --logits-type f32
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --save-logits a --logits-type f64
expect_rc 2 "$BIN" perplexity --model "$M" --file "$T" --bogus
# runtime errors: exit 1 with the reason
expect_rc 1 "$BIN" perplexity --model "$M" --file "$PL_TMP/none.txt"
expect_grep "cannot read" "$PL_TMP/err"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$PL_TMP/short.txt" --ctx 32
expect_grep "need at least 64" "$PL_TMP/err"
expect_rc 1 "$BIN" perplexity --model "$PL_TMP/none.gguf" --file "$T"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$T" --ctx 32 --chunks 3 --kl-base "$PL_TMP/none.lp"
# the base must be this text, window and vocabulary
expect_rc 1 "$BIN" perplexity --model "$M" --file "$T" --ctx 16 --chunks 3 --kl-base "$PL_TMP/b.lp"
expect_grep "windows of 32 tokens" "$PL_TMP/err"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$T" --ctx 32 --chunks 4 --kl-base "$PL_TMP/b.lp"
expect_grep "holds 3 windows" "$PL_TMP/err"
sed 's/Mia/Max/' "$T" >"$PL_TMP/other.txt"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$PL_TMP/other.txt" --ctx 32 --chunks 3 --kl-base "$PL_TMP/b.lp"
expect_grep "the text differs" "$PL_TMP/err"
# damaged base files
head -c 1000 "$PL_TMP/b.lp" >"$PL_TMP/trunc.lp"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$T" --ctx 32 --chunks 3 --kl-base "$PL_TMP/trunc.lp"
expect_grep "needs" "$PL_TMP/err"
head -c 4096 /dev/urandom >"$PL_TMP/junk.lp"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$T" --ctx 32 --chunks 3 --kl-base "$PL_TMP/junk.lp"
expect_grep "not a saved log-probability file" "$PL_TMP/err"
expect_rc 1 "$BIN" perplexity --model "$M" --file "$T" --ctx 32 --chunks 3 --kl-base "$PL_TMP"
# an unwritable save path: nothing left
expect_rc 1 "$BIN" perplexity --quiet --model "$M" --file "$T" --ctx 32 --chunks 1 --save-logits "$PL_TMP/no/dir/x.lp"

# imatrix
expect_rc 0 "$BIN" imatrix --quiet --model "$M" --file "$T" --ctx 32 --chunks 2 --out "$PL_TMP/m.imatrix"
expect_grep "14 matrices over 2 windows of 32 tokens" "$PL_TMP/out"
expect_rc 0 "$BIN" quantize --quiet "$M" "$PL_TMP/iq.gguf" IQ2_XXS --imatrix "$PL_TMP/m.imatrix"
expect_rc 2 "$BIN" imatrix --model "$M" --file "$T"
expect_rc 2 "$BIN" imatrix --model "$M" --file "$T" --out x --ctx 8
expect_rc 2 "$BIN" imatrix --model "$M" --out x
expect_rc 1 "$BIN" imatrix --model "$M" --file "$PL_TMP/short.txt" --out "$PL_TMP/s.imatrix"
ok
[ -e "$PL_TMP/s.imatrix" ] && fail "a failed imatrix run left its file"
expect_rc 1 "$BIN" imatrix --quiet --model "$M" --file "$T" --ctx 32 --chunks 1 --out "$PL_TMP/no/dir/m.imatrix"

# fit: the whole table on the tiny model (64-wide rows: llama.cpp's fallbacks)
expect_rc 0 "$BIN" fit --quiet --model "$M" --memory 64M --ctx 64 --eval "$T" --eval-ctx 32 --eval-chunks 2 --all \
    --out "$PL_TMP/fit.gguf"
expect_grep "fit: Q4_K_M (Q4) needs" "$PL_TMP/out"
expect_grep "= IQ2_XS" "$PL_TMP/out"
ok
[ -f "$PL_TMP/fit.gguf" ] || fail "fit wrote no file"
ls -a "$PL_TMP" | grep -q pocketllm-fit && fail "fit left its work folder behind"
# without an importance matrix the IQ rungs are skipped, said why
expect_rc 0 "$BIN" fit --quiet --model "$M" --memory 64M --ctx 64 --all
expect_grep "needs an importance matrix" "$PL_TMP/out"
# budgets: absurd, malformed, missing -> usage
for m in 0 1K 1023K 2P 1e30 -5 abc 12Q ""; do expect_rc 2 "$BIN" fit --model "$M" --memory "$m"; done
expect_rc 2 "$BIN" fit --model "$M"
expect_rc 2 "$BIN" fit --memory 1G
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --eval-ctx 32
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --ctx 0
expect_rc 2 "$BIN" fit --model "$M" --memory 1G --eval-ctx 4 --eval "$T"
# runtime refusals
# a quantized source is taken (its rungs requantized); one that fits is the answer as it is
expect_rc 0 "$BIN" fit --quiet --model "$PL_TMP/q.gguf" --memory 1G
expect_grep "the source fits as it is" "$PL_TMP/out"
expect_rc 1 "$BIN" fit --model "$M" --memory 1G --out "$M"
expect_grep "overwrite the source" "$PL_TMP/err"
expect_rc 1 "$BIN" fit --quiet --model "$M" --memory 1G --eval "$PL_TMP/short.txt"
expect_grep "need at least" "$PL_TMP/err"
expect_rc 1 "$BIN" fit --quiet --model "$M" --memory 1G --imatrix "$PL_TMP/junk.lp"
expect_rc 1 "$BIN" fit --quiet --model "$M" --memory 1G --work-dir "$PL_TMP/no/dir"
expect_grep "cannot make a work folder" "$PL_TMP/err"
expect_rc 1 "$BIN" fit --quiet --model "$M" --memory 8M --ctx 65536
expect_grep "does not fit" "$PL_TMP/err"
done_testing
