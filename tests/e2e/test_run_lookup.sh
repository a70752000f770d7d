# test_run_lookup.sh -- `pocketllm run --lookup N`: prompt-lookup
# speculative decoding gives exactly plain greedy's ids and text -- on
# stories260K, a random-weight qwen3 in f16 and at Q4_K_M (the batched
# verification pass against single-token decoding), for several n-gram
# lengths and draft sizes, with a repetition penalty, when -n ends inside a
# kept draft and when the context fills up; the drafts are verified (the
# --timings line counts kept drafts); under a grammar or a JSON schema,
# the same ids as plain decoding under it, greedy and sampled (sampled, each
# row is the target's own draw, in order: plain sampling's ids from the same
# seed, drafts kept); and the refusals (bad counts) exit 2.  Sampled
# speculation without a constraint: test_spec_sampling.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/spec_lib.sh"
BIN=$PL_BIN
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }
expect_rc 0 "$BIN" synth --quiet --shape tiny --type f16 --seed 5 "$PL_TMP/q16.gguf" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --quiet --shape tiny --type Q4_K_M --seed 5 "$PL_TMP/q4.gguf" || { done_testing; exit 1; }

REP="Lily and Ben were friends. Lily and Ben played in the park. Lily and Ben"
for m in "$STORIES" "$PL_TMP/q16.gguf" "$PL_TMP/q4.gguf"; do
    for p in "Once upon a time" "$REP"; do
        same "$m" "$p" 160 --lookup 3
        same "$m" "$p" 160 --lookup 1 --draft-max 1
        same "$m" "$p" 97 --lookup 5 --draft-max 16
        same "$m" "$p" 120 --lookup 2 --draft-max 4 --draft-min 2
    done
    # penalties see the kept tokens in order, as in the plain loop
    "$BIN" run -m "$m" -p "$REP" -n 100 -t 1 --print-ids --repeat-penalty 1.3 >"$PL_TMP/plain" 2>/dev/null
    "$BIN" run -m "$m" -p "$REP" -n 100 -t 1 --print-ids --repeat-penalty 1.3 --lookup 3 >"$PL_TMP/spec" 2>/dev/null
    ok
    cmp -s "$PL_TMP/plain" "$PL_TMP/spec" || fail "$(basename "$m"): ids differ with a repetition penalty"
done

# the text, and the drafts really kept (the story repeats itself)
expect_rc 0 "$BIN" run -m "$STORIES" -p "$REP" -n 200 -t 1
cp "$PL_TMP/out" "$PL_TMP/plain.txt"
expect_rc 0 "$BIN" run -m "$STORIES" -p "$REP" -n 200 -t 1 --lookup 3 --timings
ok
cmp -s "$PL_TMP/plain.txt" "$PL_TMP/out" || fail "the text differs with --lookup"
expect_grep "lookup drafted" "$PL_TMP/err"
kept=$(sed -n 's/.*drafted [0-9]* tokens, \([0-9]*\) kept.*/\1/p' "$PL_TMP/err")
ok
[ "${kept:-0}" -gt 0 ] || fail "no draft was kept: $(cat "$PL_TMP/err")"

# the context fills up: the same ids, the same message
"$BIN" run -m "$STORIES" -p "$REP" -n 500 -t 1 --ctx 64 --print-ids >"$PL_TMP/plain" 2>"$PL_TMP/plain.err"
"$BIN" run -m "$STORIES" -p "$REP" -n 500 -t 1 --ctx 64 --print-ids --lookup 4 >"$PL_TMP/spec" 2>"$PL_TMP/spec.err"
ok
cmp -s "$PL_TMP/plain" "$PL_TMP/spec" || fail "ids differ when the context fills up"
expect_grep "the context of 64 positions is full" "$PL_TMP/spec.err"

# refusals
expect_rc 2 "$BIN" run -m "$STORIES" -p "x" --lookup 9
expect_rc 2 "$BIN" run -m "$STORIES" -p "x" --lookup 2 --draft-max 2 --draft-min 3

# under a constraint: every row sampled under the grammar by the target's
# sampler, the id accepted into it, as the plain loop does -- the same ids,
# greedy and sampled from one seed; and a match that ends (the grammar
# done) ends the output where plain decoding does
printf 'root ::= word ([ ,.]+ word)*\nword ::= [a-zA-Z]+\n' >"$PL_TMP/words.gbnf"
printf 'root ::= "Lily" (" and Ben" | " played")+ "."\n' >"$PL_TMP/short.gbnf"
for g in words short; do
    for how in "" "--temperature 0.9 --seed 11" "--temperature 0.6 --top-k 20 --seed 3 --repeat-penalty 1.1"; do
        # shellcheck disable=SC2086
        "$BIN" run -m "$STORIES" -p "$REP" -n 120 -t 1 --print-ids --grammar "$PL_TMP/$g.gbnf" $how >"$PL_TMP/plain" 2>&1
        for extra in "--lookup 3" "--lookup 2 --draft-max 3" "--draft $STORIES"; do
            # shellcheck disable=SC2086
            "$BIN" run -m "$STORIES" -p "$REP" -n 120 -t 1 --print-ids --grammar "$PL_TMP/$g.gbnf" $how $extra \
                >"$PL_TMP/spec" 2>&1
            ok
            cmp -s "$PL_TMP/plain" "$PL_TMP/spec" || fail "--grammar $g $how $extra: ids differ from plain decoding under it"
        done
    done
done
# sampled under the grammar, drafts are kept too (the rows after a kept
# draft were drawn under the advanced grammar)
"$BIN" run -m "$STORIES" -p "$REP" -n 120 -t 1 --grammar "$PL_TMP/words.gbnf" --temperature 0.5 --seed 2 --lookup 3 \
    --timings >/dev/null 2>"$PL_TMP/t.err"
ok
grep -qE "lookup drafted [0-9]+ tokens, [1-9][0-9]* kept" "$PL_TMP/t.err" ||
    fail "no draft kept sampling under the grammar: $(cat "$PL_TMP/t.err")"
# drafts were kept under it (the 120 words repeat themselves), so the rows
# after a kept draft were sampled under the advanced grammar
"$BIN" run -m "$STORIES" -p "$REP" -n 120 -t 1 --grammar "$PL_TMP/words.gbnf" --lookup 3 --timings >/dev/null \
    2>"$PL_TMP/t.err"
ok
grep -qE "lookup drafted [0-9]+ tokens, [1-9][0-9]* kept" "$PL_TMP/t.err" ||
    fail "no draft kept under the grammar: $(cat "$PL_TMP/t.err")"
echo '{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}' \
    >"$PL_TMP/s.json"
"$BIN" run -m "$PL_TMP/q16.gguf" -p "$REP" -n 60 -t 1 --print-ids --json-schema "$PL_TMP/s.json" >"$PL_TMP/plain" 2>&1
"$BIN" run -m "$PL_TMP/q16.gguf" -p "$REP" -n 60 -t 1 --print-ids --json-schema "$PL_TMP/s.json" --lookup 3 \
    >"$PL_TMP/spec" 2>&1
ok
cmp -s "$PL_TMP/plain" "$PL_TMP/spec" || fail "--json-schema --lookup: ids differ from plain greedy under it"
"$BIN" run -m "$PL_TMP/q16.gguf" -p "$REP" -n 60 -t 1 --print-ids --json-schema "$PL_TMP/s.json" --temperature 0.8 \
    --seed 9 >"$PL_TMP/plain" 2>&1
"$BIN" run -m "$PL_TMP/q16.gguf" -p "$REP" -n 60 -t 1 --print-ids --json-schema "$PL_TMP/s.json" --temperature 0.8 \
    --seed 9 --lookup 3 >"$PL_TMP/spec" 2>&1
ok
cmp -s "$PL_TMP/plain" "$PL_TMP/spec" || fail "--json-schema --lookup sampled: ids differ from plain sampling under it"
done_testing
