# test_bad_gguf.sh -- `pocketllm inspect` on one malformed file per class:
# exit status 1, exactly one line on stderr naming the problem and the byte
# offset.  A hang guard stops any run that takes more than 10 s; the slowest
# run is reported (the requirement is well under a second).
. "$(dirname "$0")/lib.sh"
"$PL_TOOLS/pl_mkbad" "$PL_TMP" >"$PL_TMP/index" || { echo "FAIL: pl_mkbad" >&2; exit 1; }
slowest=0
slowest_name=
n=0
while IFS=$'\t' read -r name expect; do
    n=$((n + 1))
    start=$(date +%s%N)
    timeout 10 "$PL_BIN" inspect "$PL_TMP/$name.gguf" >"$PL_TMP/out" 2>"$PL_TMP/err"
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$ms" -gt "$slowest" ] && slowest=$ms && slowest_name=$name
    ok
    [ "$rc" = 1 ] || fail "$name: exit status $rc, expected 1 ($(head -c 300 "$PL_TMP/err"))"
    lines=$(wc -l <"$PL_TMP/err")
    [ "$lines" = 1 ] || fail "$name: $lines lines on stderr, expected 1"
    expect_grep "$expect" "$PL_TMP/err"
    expect_grep "at byte" "$PL_TMP/err"
    [ -s "$PL_TMP/out" ] && fail "$name: printed to stdout"
done <"$PL_TMP/index"
[ "$n" -ge 35 ] || fail "only $n malformed classes"
echo "malformed files: $n, slowest ${slowest} ms ($slowest_name)" >&2
done_testing
