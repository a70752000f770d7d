# test_serve_openai.sh -- the official `openai` npm client (pinned, installed
# at test time into a cache by scripts/install-test-npm.sh; a failed install
# fails the test) drives `pocketllm serve`: models, chat and completions,
# whole and streamed (the same greedy answer either way), usage, stop
# strings cut from a real answer, n with seeds, logprobs, echo, refusals as
# the client's errors, the API key, and reasoning_content from a template
# that opens a think block.  Model: a random-weight Qwen3 (tiny shape) with
# the real Qwen2/Qwen3 tokenizer and the Qwen3 template.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
NODE_MODULES=$(bash "$PL_SRC/scripts/install-test-npm.sh" 2>"$PL_TMP/npm.err") || {
    echo "FAIL: the openai npm client could not be installed: $(tail -3 "$PL_TMP/npm.err")" >&2
    exit 1
}
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
QWQ_TEMPLATE=$(dirname "$QWEN3_TEMPLATE")/Qwen-QwQ-32B.jinja

serve_start think --model "$PL_TMP/m.gguf" --name tiny --template "$QWQ_TEMPLATE" --ctx 512 --parallel 2 -t 1
THINK_BASE=$BASE/v1
THINK_PID=$SERVER_PID
THINK_LOG=$SERVER_LOG
serve_start main --model "$PL_TMP/m.gguf" --name tiny --api-key sekrit --ctx 512 --parallel 2 -t 1

BASE=$BASE/v1 API_KEY=sekrit MODEL=tiny THINK_BASE=$THINK_BASE NODE_PATH=$NODE_MODULES \
    node "$(dirname "$0")/serve_openai_client.js" >"$PL_TMP/node.out" 2>"$PL_TMP/node.err"
script_verdict $? "$PL_TMP/node.out" "the openai client checks failed: $(head -c 3000 "$PL_TMP/node.err")"
ok
grep -q "openai client: [0-9]* checks, 0 failed" "$PL_TMP/node.out" || fail "the client did not report its checks"

serve_stop
SERVER_PID=$THINK_PID SERVER_LOG=$THINK_LOG serve_stop
done_testing
