# serve_lib.sh -- shared by the tests of `pocketllm serve` and `pocketllm
# chat`: test models with the real Qwen2/Qwen3 tokenizer and the Qwen3 chat
# template (from the llama.cpp bundle that scripts/install-oracle.sh puts in
# its cache -- fetched when missing; a failure fails the test), starting a
# server on a free port and stopping it, and the Debian python3.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
BIN=$PL_BIN

# The llama.cpp bundle: $PL_ORACLE_DIR, else the installer's cache.
serve_bundle() {
    local dir=${PL_ORACLE_DIR:-}
    if [ -z "$dir" ] || [ ! -f "$dir/src/models/ggml-vocab-qwen2.gguf" ]; then
        dir=$(bash "$PL_SRC/scripts/install-oracle.sh" 2>"$PL_TMP/oracle.err") || {
            echo "FAIL: cannot get the llama.cpp bundle (Qwen2 vocabulary, Qwen3 template): $(tail -3 "$PL_TMP/oracle.err")" >&2
            exit 1
        }
    fi
    VOCAB=$dir/src/models/ggml-vocab-qwen2.gguf
    QWEN3_TEMPLATE=$dir/src/models/templates/Qwen-Qwen3-0.6B.jinja
    [ -f "$VOCAB" ] && [ -f "$QWEN3_TEMPLATE" ] || { echo "FAIL: $dir lacks the Qwen2 vocabulary or Qwen3 template" >&2; exit 1; }
}

# serve_model OUT SYNTH-ARGS... : a random-weight Qwen3 with the real tokenizer and template
serve_model() {
    local out=$1; shift
    "$BIN" synth --quiet --vocab "$VOCAB" --template "$QWEN3_TEMPLATE" "$@" "$out" || {
        echo "FAIL: pocketllm synth $* failed" >&2
        exit 1
    }
}

# serve_start NAME ARGS... : start `pocketllm serve ARGS --port 0` in the
# background; sets SERVER_PID and PORT (fails the test if it does not come up)
serve_start() {
    local name=$1; shift
    SERVER_LOG=$PL_TMP/$name.log
    "$BIN" serve --port 0 "$@" 2>"$SERVER_LOG" &
    SERVER_PID=$!
    SERVER_PIDS="${SERVER_PIDS:-} $SERVER_PID"
    # a test that ends early leaves no server behind
    trap 'for p in $SERVER_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$PL_TMP"' EXIT
    PORT=
    for _ in $(seq 1 300); do
        PORT=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$SERVER_LOG" 2>/dev/null | head -1 | sed 's/.*://')
        [ -n "$PORT" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$PORT" ]; then
        echo "FAIL: the server did not start: $(tail -5 "$SERVER_LOG")" >&2
        exit 1
    fi
    BASE=http://127.0.0.1:$PORT
}

# serve_stop : SIGTERM, then the exit status must be 0 and the log free of
# sanitizer reports
serve_stop() {
    kill -TERM "$SERVER_PID" 2>/dev/null
    local rc=0
    wait "$SERVER_PID" || rc=$?
    ok
    [ "$rc" = 0 ] || fail "the server exited with $rc on SIGTERM: $(tail -5 "$SERVER_LOG")"
    ok
    if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$SERVER_LOG"; then
        fail "sanitizer report in the server log: $(grep -m3 -E "Sanitizer|runtime error" "$SERVER_LOG")"
    fi
}
