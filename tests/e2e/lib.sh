# lib.sh -- helpers for the end-to-end shell tests: a scratch folder,
# pass/fail accounting, and assertions that print what they expected.
set -u
PL_TMP=$(mktemp -d /tmp/pl_e2e.XXXXXX)
trap 'rm -rf "$PL_TMP"' EXIT
PL_FAILS=0
PL_CHECKS=0

fail() { echo "FAIL: $*" >&2; PL_FAILS=$((PL_FAILS + 1)); }
ok() { PL_CHECKS=$((PL_CHECKS + 1)); }

# expect_rc WANT CMD... : run CMD, compare its exit status
expect_rc() {
    local want=$1; shift
    "$@" >"$PL_TMP/out" 2>"$PL_TMP/err"
    local rc=$?
    ok
    if [ "$rc" != "$want" ]; then
        fail "'$*' exited $rc, expected $want; stderr: $(head -c 400 "$PL_TMP/err")"
        return 1
    fi
    return 0
}

# expect_grep PATTERN FILE : FILE contains PATTERN (fixed string)
expect_grep() {
    ok
    grep -qF -- "$1" "$2" || { fail "'$2' lacks '$1': $(head -c 400 "$2")"; return 1; }
}

# script_verdict RC OUTPUT WHAT : the end of a test that runs a checking
# script (Python, Node): count it, show what it printed, fail with WHAT
# unless it exited 0.  Call it right after the script, with $? as RC.
script_verdict() {
    ok
    cat "$2" >&2
    [ "$1" = 0 ] || fail "$3"
}

done_testing() {
    echo "$(basename "$0"): $PL_CHECKS checks, $PL_FAILS failed" >&2
    [ "$PL_FAILS" = 0 ]
}
