# test_serve_lookup.sh -- speculative decoding in `pocketllm serve
# --lookup N`: each decoding sequence drafts by prompt lookup and verifies
# in the shared batched pass.  serve_spec_check.py holds every answer --
# greedy, sampled with a seed, with log-probabilities, a stop string, a
# JSON schema, a length limit, a long prompt -- to the plain server's
# answer to the same request, sent alone and all at once (--parallel 4);
# /health reports the drafts and the share kept (the prompts repeat
# themselves: at least half), /metrics counts them, a plain server reports
# none.  Bad options are refused.  A draft model: test_serve_draft.sh.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
serve_start plain --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet
PLAIN=$PORT PLAIN_PID=$SERVER_PID
serve_start spec --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet --metrics --lookup 3 \
    --draft-max 6
SPEC=$PORT

"$PY" "$PL_SRC/tests/e2e/serve_spec_check.py" "$PLAIN" "$SPEC" 3 - 0.5 >"$PL_TMP/py.out" 2>&1
script_verdict $? "$PL_TMP/py.out" "serve --lookup differs from plain serving"
serve_stop
SERVER_PID=$PLAIN_PID
serve_stop

expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --draft "$PL_TMP/m.gguf" --lookup 2 && expect_grep "give one" "$PL_TMP/err"
expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --lookup 9
expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --lookup 2 --draft-min 4 --draft-max 2
done_testing
