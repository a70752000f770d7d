# test_run_draft.sh -- `pocketllm run --draft M`: speculative decoding with
# a draft model gives exactly plain greedy's ids and text.  Drafts of every
# quality: the model itself (every draft kept), its own lower rungs (q8_0 of
# stories260K; Q8_0 and Q4_K_M of a random-weight qwen3 written from the
# same seed: the same weights, rounded -- how a matching draft is made for
# random weights; a random model's flat logits make Q4_K_M's rounding flip
# most argmaxes) and an unrelated model with the same vocabulary (a different
# seed: drafts mostly rejected); several draft sizes, -n ending inside a kept
# draft, a packed KV cache, the context filling up; the --timings line
# counts what was drafted and kept; a sampled run is reproducible from its
# seed, and under a grammar equals plain sampling from that seed; the
# refusals (another vocabulary, --lookup with it) say why.  That sampled speculation keeps plain sampling's distribution is
# test_spec_sampling.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/spec_lib.sh"
BIN=$PL_BIN
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }
expect_rc 0 "$BIN" quantize "$STORIES" "$PL_TMP/st_q8.gguf" q8_0 || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --quiet --shape small --type f16 --seed 5 "$PL_TMP/q16.gguf" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --quiet --shape small --type Q8_0 --seed 5 "$PL_TMP/q8.gguf" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --quiet --shape small --type Q4_K_M --seed 5 "$PL_TMP/q4.gguf" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --quiet --shape small --type f16 --seed 6 "$PL_TMP/other.gguf" || { done_testing; exit 1; }

for p in "Once upon a time" "Lily and Ben were friends. They"; do
    for d in "$STORIES" "$PL_TMP/st_q8.gguf"; do
        same "$STORIES" "$p" 150 --draft "$d"
        same "$STORIES" "$p" 97 --draft "$d" --draft-max 3
        same "$STORIES" "$p" 61 --draft "$d" --draft-max 16 --draft-min 2
    done
    for d in "$PL_TMP/q16.gguf" "$PL_TMP/q8.gguf" "$PL_TMP/q4.gguf" "$PL_TMP/other.gguf"; do
        same "$PL_TMP/q16.gguf" "$p" 80 --draft "$d"
        same "$PL_TMP/q16.gguf" "$p" 80 --draft "$d" --draft-max 1
        same "$PL_TMP/q16.gguf" "$p" 80 --draft "$d" --kv q8_0
    done
done

# the text; the drafts counted: all kept from the model itself, fewer from
# a lower rung, fewer still from an unrelated model
expect_rc 0 "$BIN" run -m "$STORIES" -p "Once upon a time" -n 200 -t 1
cp "$PL_TMP/out" "$PL_TMP/plain.txt"
kept_share() { # MODEL DRAFT -> "drafted kept"
    expect_rc 0 "$BIN" run -m "$1" -p "Once upon a time" -n 200 -t 1 --draft "$2" --timings
    sed -n 's/.*the draft model drafted \([0-9]*\) tokens, \([0-9]*\) kept.*/\1 \2/p' "$PL_TMP/err"
}
read -r d_self k_self < <(kept_share "$STORIES" "$STORIES")
ok
cmp -s "$PL_TMP/plain.txt" "$PL_TMP/out" || fail "the text differs with --draft"
[ -n "$d_self" ] && [ "$d_self" -gt 0 ] && [ "$d_self" = "$k_self" ] || fail "the model as its own draft: $d_self drafted, $k_self kept"
read -r d_q8 k_q8 < <(kept_share "$PL_TMP/q16.gguf" "$PL_TMP/q8.gguf")
read -r d_q4 k_q4 < <(kept_share "$PL_TMP/q16.gguf" "$PL_TMP/q4.gguf")
read -r d_o k_o < <(kept_share "$PL_TMP/q16.gguf" "$PL_TMP/other.gguf")
echo "kept: self $k_self/$d_self, Q8_0 rung $k_q8/$d_q8, Q4_K_M rung $k_q4/$d_q4, unrelated model $k_o/$d_o" >&2
ok
# (the Q8_0 rung keeps about 99% here, an unrelated model about 10%)
[ -n "$k_q8" ] && [ -n "$k_o" ] && [ $((k_q8 * 2)) -gt "$d_q8" ] && [ $((k_o * 2)) -lt "$d_o" ] ||
    fail "the Q8_0 rung's drafts ($k_q8/$d_q8) are not mostly kept, or an unrelated model's ($k_o/$d_o) are"

# the context fills up: the same ids, the same message
"$BIN" run -m "$STORIES" -p "Once upon a time" -n 500 -t 1 --ctx 64 --print-ids >"$PL_TMP/plain" 2>"$PL_TMP/plain.err"
"$BIN" run -m "$STORIES" -p "Once upon a time" -n 500 -t 1 --ctx 64 --print-ids --draft "$PL_TMP/st_q8.gguf" \
    >"$PL_TMP/spec" 2>"$PL_TMP/spec.err"
ok
cmp -s "$PL_TMP/plain" "$PL_TMP/spec" || fail "ids differ when the context fills up"
expect_grep "the context of 64 positions is full" "$PL_TMP/spec.err"

# refusals
expect_rc 1 "$BIN" run -m "$STORIES" -p "x" --draft "$PL_TMP/q16.gguf" && expect_grep "vocabulary is not the model's" "$PL_TMP/err"
expect_rc 1 "$BIN" run -m "$STORIES" -p "x" --draft "$PL_TMP/missing.gguf" && expect_grep "missing.gguf" "$PL_TMP/err"
# sampled: the same seed gives the same ids (the distribution is
# test_spec_sampling.sh's)
a=$("$BIN" run -m "$STORIES" -p "Once upon a time" -n 40 --print-ids --temperature 0.9 --seed 4 --draft "$PL_TMP/st_q8.gguf")
b=$("$BIN" run -m "$STORIES" -p "Once upon a time" -n 40 --print-ids --temperature 0.9 --seed 4 --draft "$PL_TMP/st_q8.gguf")
ok
[ -n "$a" ] && [ "$a" = "$b" ] || fail "sampled --draft with one seed gives two answers: '$a' '$b'"
expect_rc 2 "$BIN" run -m "$STORIES" -p "x" --draft "$STORIES" --lookup 2 && expect_grep "give one" "$PL_TMP/err"
# sampled under a grammar: the target's own draws, so plain sampling's ids
# from the same seed (more grammars: test_run_lookup.sh)
printf 'root ::= word ([ ,.]+ word)*\nword ::= [a-zA-Z]+\n' >"$PL_TMP/g.gbnf"
a=$("$BIN" run -m "$STORIES" -p "Once upon a time" -n 60 --print-ids --temperature 0.8 --seed 6 --grammar "$PL_TMP/g.gbnf")
b=$("$BIN" run -m "$STORIES" -p "Once upon a time" -n 60 --print-ids --temperature 0.8 --seed 6 --grammar "$PL_TMP/g.gbnf" \
    --draft "$PL_TMP/st_q8.gguf")
ok
[ -n "$a" ] && [ "$a" = "$b" ] || fail "sampled --draft under a grammar differs from plain sampling: '$a' '$b'"
expect_rc 0 "$BIN" run --help && expect_grep "--draft M" "$PL_TMP/out"
done_testing
