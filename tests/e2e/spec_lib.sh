# spec_lib.sh -- shared by the speculative decoding tests
# (test_run_lookup.sh, test_run_draft.sh).  Source after lib.sh, with BIN set.
#
# same MODEL PROMPT N ARGS... : `run ARGS` (a way of speculating) gives plain
#   greedy's prompt ids and generated ids, one thread each
same() {
    local model=$1 prompt=$2 n=$3
    shift 3
    "$BIN" run -m "$model" -p "$prompt" -n "$n" -t 1 --print-ids >"$PL_TMP/plain" 2>"$PL_TMP/plain.err"
    "$BIN" run -m "$model" -p "$prompt" -n "$n" -t 1 --print-ids "$@" >"$PL_TMP/spec" 2>"$PL_TMP/spec.err"
    ok
    cmp -s "$PL_TMP/plain" "$PL_TMP/spec" ||
        fail "$(basename "$model") '$prompt' -n $n $*: ids differ: $(tail -1 "$PL_TMP/plain" | head -c 200) vs $(tail -1 "$PL_TMP/spec" | head -c 200) $(head -c 300 "$PL_TMP/spec.err")"
}
