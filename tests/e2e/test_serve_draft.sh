# test_serve_draft.sh -- speculative decoding in `pocketllm serve --draft
# M`: a draft model with a sequence of its own per request drafts each
# decoding sequence's next ids greedily (all sequences batched together),
# verified in the shared pass.  serve_spec_check.py holds every answer --
# greedy, sampled with a seed, logprobs, a stop string, a JSON schema, a
# length limit, a long prompt, a conversation going on -- to a plain
# server's, alone and all at once, with two drafts: the model itself (all
# its drafts kept on a greedy request; --parallel 4) and an unrelated model with the same
# vocabulary (another seed: about none kept, so every step cuts back), the
# latter with --batch 32 so the draft catches up on long prompts in chunks
# over several steps, --draft-max 3 and --draft-min 2.  /health names the
# draft model; refusals: another vocabulary, a missing file, --lookup too.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16 --seed 5
serve_model "$PL_TMP/other.gguf" --shape tiny --type f16 --seed 6
serve_start plain --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet
PLAIN=$PORT PLAIN_PID=$SERVER_PID

serve_start self --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet --metrics --draft "$PL_TMP/m.gguf"
expect_grep "draft model m" "$SERVER_LOG"
# greedy, the model as its own draft proposes what it then decides: every
# draft kept (the rows' logits do not depend on their batch)
"$PY" - "$PORT" <<'PY' >"$PL_TMP/py.out" 2>&1
import http.client, json, sys
def call(method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=300)
    c.request(method, path, json.dumps(body) if body else None, {"Content-Type": "application/json"})
    return json.loads(c.getresponse().read())
r = call("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "count: one two three"}],
                                          "max_tokens": 48, "temperature": 0})
sp = call("GET", "/health")["speculative"]
print("greedy alone:", sp, "tokens", r["usage"]["completion_tokens"])
sys.exit(0 if sp["drafted"] > 0 and sp["accepted"] == sp["drafted"] else 1)
PY
script_verdict $? "$PL_TMP/py.out" "the model as its own draft: not every draft kept under greedy decoding"
# (sampled requests keep fewer: the target's draws on a random model's flat
# logits are seldom the draft's most likely id)
"$PY" "$PL_SRC/tests/e2e/serve_spec_check.py" "$PLAIN" "$PORT" 0 m 0.3 >"$PL_TMP/py.out" 2>&1
script_verdict $? "$PL_TMP/py.out" "serve --draft (the model itself) differs from plain serving"
serve_stop

serve_start other --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet --metrics --batch 32 \
    --draft "$PL_TMP/other.gguf" --draft-max 3 --draft-min 2
"$PY" "$PL_SRC/tests/e2e/serve_spec_check.py" "$PLAIN" "$PORT" 0 other 0 >"$PL_TMP/py.out" 2>&1
script_verdict $? "$PL_TMP/py.out" "serve --draft (an unrelated model) differs from plain serving"
serve_stop
SERVER_PID=$PLAIN_PID
serve_stop

# refusals, each in one line
expect_rc 1 "$BIN" serve --model "$PL_TMP/m.gguf" --port 0 --draft "$PL_SHARED/models/stories260K.gguf" &&
    expect_grep "vocabulary is not the model's" "$PL_TMP/err"
expect_rc 1 "$BIN" serve --model "$PL_TMP/m.gguf" --port 0 --draft "$PL_TMP/missing.gguf" && expect_grep "missing.gguf" "$PL_TMP/err"
expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --draft "$PL_TMP/m.gguf" --lookup 2 && expect_grep "give one" "$PL_TMP/err"
expect_rc 0 "$BIN" serve --help && expect_grep "--draft M" "$PL_TMP/out"
done_testing
