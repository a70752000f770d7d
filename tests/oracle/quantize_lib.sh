# quantize_lib.sh -- shared by tests/oracle/test_quantize*.sh: quantize
# inputs with pocketllm and with llama.cpp (through the oracle) and compare
# the files, then let llama.cpp run ours.
#
# qjob LABEL MODEL TYPE RECIPE "ORACLE OPTIONS" "OUR OPTIONS"
#   queues one comparison: TYPE (+ options) is what pocketllm gets, RECIPE
#   (+ options) what llama.cpp gets.
# qrun
#   runs every queued llama.cpp job in one oracle process (ggml builds its
#   IQ grids once per process: seconds each), then for each job:
#   1. llama.cpp must have quantized (it must not refuse);
#   2. our run: the files are equal tensor by tensor (types, shapes, bytes)
#      and in metadata (keys in order, values); keys named in $QIGNORE are
#      left out of the metadata comparison.  When our run fails (a type this
#      build cannot encode yet), that fails the test with the reason, and
#      the types are still compared through our --dry-run plan;
#   3. llama.cpp loads our file and decodes greedily (4 ids).
# A row per job goes to $QTABLE: label | types equal | bytes equal | runs.
QTABLE=${QTABLE:-$PL_TMP/table}
QIGNORE=${QIGNORE:-}
: >"$QTABLE"
: >"$PL_TMP/jobs"
Q_LABEL=() Q_MODEL=() Q_TYPE=() Q_POPTS=()

qjob() {
    local i=${#Q_LABEL[@]}
    Q_LABEL+=("$1") Q_MODEL+=("$2") Q_TYPE+=("$3") Q_POPTS+=("$6")
    echo "$2 $PL_TMP/ref$i.gguf $4 -t 1 $5" >>"$PL_TMP/jobs"
}

qrow() { printf '%-34s | %-5s | %-5s | %s\n' "$1" "$2" "$3" "$4" >>"$QTABLE"; }

# qtypes LABEL MODEL TYPE OPTS REF: our plan's types against REF's
qtypes() {
    # shellcheck disable=SC2086
    if ! "$BIN" quantize --dry-run "$2" "$3" $4 >"$PL_TMP/plan" 2>"$PL_TMP/p.err"; then
        fail "$1: dry run failed: $(head -c 300 "$PL_TMP/p.err")"
        return 1
    fi
    "$PL_TOOLS/pl_quant_diff" --types "$5" >"$PL_TMP/ref.types"
    awk '$3 == "->" { print $1, $4 }' "$PL_TMP/plan" >"$PL_TMP/our.types"
    diff "$PL_TMP/our.types" "$PL_TMP/ref.types" >"$PL_TMP/tdiff" && return 0
    fail "$1: tensor types differ from llama.cpp's (ours <, llama.cpp >): $(head -6 "$PL_TMP/tdiff" | tr '\n' ' ')"
    return 1
}

qrun() {
    "$ORACLE" quantize-batch "$PL_TMP/jobs" >"$PL_TMP/oracle.status" 2>"$PL_TMP/oracle.err"
    mapfile -t status <"$PL_TMP/oracle.status"
    local i ign=() k
    for k in $QIGNORE; do ign+=(--ignore-key "$k"); done
    for i in "${!Q_LABEL[@]}"; do
        local label=${Q_LABEL[$i]} model=${Q_MODEL[$i]} type=${Q_TYPE[$i]} popts=${Q_POPTS[$i]}
        local ref=$PL_TMP/ref$i.gguf ours=$PL_TMP/ours.gguf types=no bytes=no runs=no
        ok
        if [ "${status[$i]:-}" != ok ]; then
            fail "$label: llama.cpp did not quantize (${status[$i]:-no status}): $(tail -c 300 "$PL_TMP/oracle.err")"
            qrow "$label" - - -
            continue
        fi
        rm -f "$ours"
        # shellcheck disable=SC2086
        if ! "$BIN" quantize --quiet -t 2 "$model" "$ours" "$type" $popts >"$PL_TMP/q.out" 2>"$PL_TMP/q.err"; then
            fail "$label: pocketllm quantize failed: $(head -c 300 "$PL_TMP/q.err")"
            qtypes "$label" "$model" "$type" "$popts" "$ref" && types=yes
            qrow "$label" "$types" - -
            rm -f "$ref"
            continue
        fi
        ok
        "$PL_TOOLS/pl_quant_diff" "$ours" "$ref" "${ign[@]}" >"$PL_TMP/bdiff" 2>&1
        grep -q "^types: equal" "$PL_TMP/bdiff" && types=yes
        if grep -q "^equal:" "$PL_TMP/bdiff"; then
            bytes=yes
        else
            fail "$label: file differs from llama.cpp's: $(head -c 400 "$PL_TMP/bdiff" | tr '\n' ' ')"
        fi
        ok
        if "$ORACLE" greedy "$ours" --ids "1 2 3" -n 4 --fa off --kv f16 -t 1 >"$PL_TMP/g.out" 2>"$PL_TMP/g.err" &&
            [ "$(wc -w <"$PL_TMP/g.out")" -ge 1 ]; then
            runs=yes
        else
            fail "$label: llama.cpp cannot run our file: $(tail -c 300 "$PL_TMP/g.err")"
        fi
        qrow "$label" "$types" "$bytes" "$runs"
        rm -f "$ref"
    done
    Q_LABEL=() Q_MODEL=() Q_TYPE=() Q_POPTS=()
    : >"$PL_TMP/jobs"
}

qtable() {
    echo "quantized                          | types | bytes | llama.cpp runs it" >&2
    cat "$QTABLE" >&2
}

# need FILE... : stop here (failing) when an input could not be made
need() {
    local f
    for f in "$@"; do
        [ -s "$f" ] && continue
        fail "input $f was not made; nothing more can be compared"
        done_testing
        exit 1
    done
}
