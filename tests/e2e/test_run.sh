# test_run.sh -- `pocketllm run` and `pocketllm logits` as a user types
# them, on the real stories260K checkpoint: help and usage errors, the text
# llama.cpp produces from BOS (REFERENCE.md), --print-ids, a prompt longer
# than the context (one-line error, exit 1, nothing on stdout), a context
# that fills during generation, seeded sampling, the logits file.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
MODEL=$PL_SHARED/models/stories260K.gguf
[ -f "$MODEL" ] || { echo "FAIL: $MODEL is missing (the shared models folder)" >&2; exit 1; }

for cmd in run logits; do
    expect_rc 0 "$BIN" $cmd --help && expect_grep "usage: pocketllm $cmd" "$PL_TMP/out"
    expect_rc 0 "$BIN" help $cmd && expect_grep "usage: pocketllm $cmd" "$PL_TMP/out"
    expect_rc 2 "$BIN" $cmd --prompt hi
    expect_rc 2 "$BIN" $cmd --model "$MODEL"
    expect_rc 2 "$BIN" $cmd --model "$MODEL" --prompt hi --ids "1 2"
    expect_rc 2 "$BIN" $cmd --model "$MODEL" --prompt hi --bogus
    expect_rc 2 "$BIN" $cmd --model "$MODEL" --prompt hi -t 0
    expect_rc 2 "$BIN" $cmd --model "$MODEL" --prompt hi --kv q4
    expect_rc 2 "$BIN" $cmd --model "$MODEL" --ids "1 x 2"
    out=""
    [ $cmd = logits ] && out="--out $PL_TMP/l"
    expect_rc 1 "$BIN" $cmd --model "$PL_TMP/missing.gguf" --prompt hi $out && expect_grep "missing.gguf" "$PL_TMP/err"
done
expect_rc 2 "$BIN" run --model "$MODEL" --prompt hi -n 0
expect_rc 2 "$BIN" run --model "$MODEL" --prompt hi --top-p 1.5
expect_rc 2 "$BIN" run --model "$MODEL" --prompt hi --temperature -1
expect_rc 2 "$BIN" logits --model "$MODEL" --prompt hi

# greedy from BOS: llama.cpp's story (REFERENCE.md)
expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 -n 40
expect_grep "Once upon a time, there was a little girl named Lily. She loved to play outside in the park." "$PL_TMP/out"
expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 -n 9 --print-ids
ok
[ "$(cat "$PL_TMP/out")" = "$(printf '1\n403 407 261 378 432 383 286 261 376')" ] || fail "--print-ids: $(cat "$PL_TMP/out")"
# the prompt is tokenized with BOS added: the same continuation
expect_rc 0 "$BIN" run --model "$MODEL" --prompt "Once upon a time" -n 10 --print-ids
expect_grep "1 403 407 261 378" "$PL_TMP/out"
expect_grep "432 383 286 261 376" "$PL_TMP/out"
# streamed text: no end-of-generation marker, ends with a newline
expect_rc 0 "$BIN" run --model "$MODEL" --prompt "Once upon a time" -n 400
ok
! grep -q "</s>" "$PL_TMP/out" || fail "the end-of-generation token was printed"

# a prompt longer than the context: one line, exit 1, no output
expect_rc 1 "$BIN" run --model "$MODEL" --prompt "Once upon a time there was a little girl" --ctx 4
expect_grep "longer than the context of 4" "$PL_TMP/err"
ok
[ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "the context error is not one line: $(cat "$PL_TMP/err")"
[ ! -s "$PL_TMP/out" ] || fail "output despite the context error: $(cat "$PL_TMP/out")"
expect_rc 1 "$BIN" logits --model "$MODEL" --ids "1 2 3 4 5" --ctx 3 --out "$PL_TMP/l.f32"
expect_grep "longer than the context of 3" "$PL_TMP/err"
# the context fills while generating: stop there, say so, exit 0
expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 --ctx 8 -n 50 --print-ids
expect_grep "context of 8 positions is full" "$PL_TMP/err"
ok
[ "$(sed -n 2p "$PL_TMP/out" | wc -w)" = 8 ] || fail "expected 8 ids before the context filled: $(cat "$PL_TMP/out")"
# ids outside the vocabulary
expect_rc 1 "$BIN" run --model "$MODEL" --ids "1 512"
expect_grep "outside the vocabulary" "$PL_TMP/err"

# the same ids whatever the pass size, thread count and instruction tier
base=$("$BIN" run --model "$MODEL" --ids 1 -n 40 --print-ids)
for args in "--batch 1" "-t 1" "-t 3"; do
    got=$("$BIN" run --model "$MODEL" --ids 1 -n 40 --print-ids $args)
    ok
    [ "$got" = "$base" ] || fail "ids with $args differ"
done
for tier in scalar avx2; do
    got=$(POCKETLLM_CPU_TIER=$tier "$BIN" run --model "$MODEL" --ids 1 -n 40 --print-ids)
    ok
    [ "$got" = "$base" ] || fail "ids on the $tier tier differ"
done

# sampling: a seed repeats, another seed (almost surely) does not
s1=$("$BIN" run --model "$MODEL" --ids 1 -n 40 --temperature 1.0 --seed 5 --print-ids)
s2=$("$BIN" run --model "$MODEL" --ids 1 -n 40 --temperature 1.0 --seed 5 --print-ids)
s3=$("$BIN" run --model "$MODEL" --ids 1 -n 40 --temperature 1.0 --seed 6 --print-ids)
ok
[ "$s1" = "$s2" ] || fail "the same seed sampled different ids"
ok
[ "$s1" != "$s3" ] || fail "seeds 5 and 6 sampled the same 40 ids"
expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 -n 20 --temperature 0.7 --top-k 5 --top-p 0.9 --min-p 0.1 \
    --repeat-penalty 1.3 --presence-penalty 0.2 --frequency-penalty 0.1 --repeat-last-n 16 --seed 1

# logits: positions x vocabulary float32
expect_rc 0 "$BIN" logits --model "$MODEL" --prompt "Once upon a time" --out "$PL_TMP/l.f32"
expect_grep "5 512" "$PL_TMP/out"
ok
[ "$(stat -c %s "$PL_TMP/l.f32")" = $((5 * 512 * 4)) ] || fail "logits file has $(stat -c %s "$PL_TMP/l.f32") bytes"
expect_rc 1 "$BIN" logits --model "$MODEL" --prompt "Once" --out "$PL_TMP/no/such/dir/l.f32"
done_testing
