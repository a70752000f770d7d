# test_spec_sampling.sh -- speculative sampling (run --draft / --lookup with
# a temperature) leaves every token distributed as plain sampling's: 300
# fixed seeds sampled each way on stories260K, then per generated position
# a chi-squared test of homogeneity of the two samples' token counts
# (spec_chi2.py); the test fails below p = 0.001.  Three proposals: a
# random-weight model with stories260K's vocabulary (drafts far from the
# target: the acceptance rule and the residual draw decide nearly every
# token; a rule that always kept the draft gives p ~ 1e-71 here, a residual
# drawn from p instead of max(0, p - q) p ~ 1e-41), stories260K's own q8_0
# under the default sampler chain (top-k, top-p, min-p truncate both
# distributions), and prompt lookup on a repetitive prompt (a certain
# proposal).  Under the sanitizers 40 seeds (the memory checks; the
# statistics are the release run's).
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }
expect_rc 0 "$BIN" quantize "$STORIES" "$PL_TMP/st_q8.gguf" q8_0 || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --quiet --arch llama --shape tiny --vocab "$STORIES" --seed 9 "$PL_TMP/rnd.gguf" ||
    { done_testing; exit 1; }
SEEDS=300
[ "${PL_SANITIZE:-0}" = 1 ] && SEEDS=40
WIDE=(-n 4 --temperature 1.5 --top-k 0 --top-p 1 --min-p 0)
CHAIN=(-n 4 --temperature 1.3 --top-k 20 --top-p 0.9 --min-p 0.02)
REP="Lily and Ben were friends. Lily and Ben played in the park. Lily and Ben"
check() { # NAME PROMPT PLAIN_ARGS... -- SPEC_ARGS...
    local name=$1 prompt=$2
    shift 2
    /usr/bin/python3 "$(dirname "$0")/spec_chi2.py" "$BIN" "$STORIES" "$prompt" $SEEDS 0.001 -- "$@" >"$PL_TMP/chi2.out" 2>&1
    local rc=$?
    ok
    echo "$name:" >&2
    sed 's/^/  /' "$PL_TMP/chi2.out" >&2
    [ $rc = 0 ] || fail "$name: $(tail -1 "$PL_TMP/chi2.out")"
}
check "a random draft model" "Once upon a time" "${WIDE[@]}" -- "${WIDE[@]}" --draft "$PL_TMP/rnd.gguf"
check "the q8_0 rung as draft" "Lily and Tom went to the" "${CHAIN[@]}" -- "${CHAIN[@]}" --draft "$PL_TMP/st_q8.gguf" --draft-max 3
check "prompt lookup" "$REP" "${WIDE[@]}" -- "${WIDE[@]}" --lookup 3
# the speculation really ran: drafts were made and some kept
expect_rc 0 "$BIN" run -m "$STORIES" -p "$REP" -n 60 --temperature 0.9 --seed 2 --lookup 3 --timings
kept=$(sed -n 's/.*drafted [0-9]* tokens, \([0-9]*\) kept.*/\1/p' "$PL_TMP/err")
ok
[ "${kept:-0}" -gt 0 ] || fail "sampled --lookup kept no draft: $(cat "$PL_TMP/err")"
done_testing
